public import NetRunner

extension ModelDirectory {
    /// The path of the model with an id.
    ///
    /// - Parameters:
    ///   - id: The model's id.
    ///   - file: The file that names it, for the error.
    /// - Returns: The model's path.
    /// - Throws: ``EvaluationError/invalidTest(file:reason:)`` naming the ids that exist.
    public func path(forModel id: String, in file: String) throws(EvaluationError) -> String {
        if let found = models[id] { return found }
        var reason = "names model \"\(id)\", which is not in \(path)"
        reason += models.isEmpty ? " (no models there)" : " (found: \(models.keys.sorted().joined(separator: ", ")))"
        if !unreadable.isEmpty {
            reason += "; unreadable bundles: " + unreadable.keys.sorted().joined(separator: ", ")
        }
        throw .invalidTest(file: file, reason: reason)
    }
}
