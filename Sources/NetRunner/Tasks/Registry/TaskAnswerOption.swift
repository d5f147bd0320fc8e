/// An answer option of one task's own, a query parameter of the server's routes for it.
///
/// Beside those every task shares (`maxResults`, `scoreThreshold`, `categoryAllowlist`,
/// `categoryDenylist`), a task's definition names its own (``VisionTaskDefinition/answerOptions``)
/// and reads them (``VisionTaskDefinition/apply(answerOptions:to:)``) for its routes and album
/// runs. A segmenter's `mask` is one. The
/// server's OpenAPI document lists each with its values; a route of another task checks the
/// value and otherwise ignores it.
public struct TaskAnswerOption: Sendable, Equatable {
    /// The query parameter's name (`mask`).
    public var name: String
    /// What it asks for, for the OpenAPI document.
    public var description: String
    /// The values it takes (`model`, `image`), the first the default.
    public var values: [String]
    /// What each value means, in the message for a value it does not take ("model (the mask at
    /// the model's output resolution, the default) or image (at the photo's size)").
    public var valuesExplained: String

    /// An option.
    ///
    /// - Parameters:
    ///   - name: The query parameter's name.
    ///   - description: What it asks for.
    ///   - values: The values it takes, the default first.
    ///   - valuesExplained: What each value means, for the refusal of another.
    public init(name: String, description: String, values: [String], valuesExplained: String) {
        self.name = name
        self.description = description
        self.values = values
        self.valuesExplained = valuesExplained
    }

    /// `value` checked against ``values``.
    ///
    /// - Parameter value: The value given.
    /// - Returns: The value.
    /// - Throws: ``TaskAnswerOptionError`` naming the values it takes.
    public func checked(_ value: String) throws(TaskAnswerOptionError) -> String {
        guard values.contains(value) else {
            throw TaskAnswerOptionError(description: "\(name) must be \(valuesExplained), not \"\(value)\".")
        }
        return value
    }
}
