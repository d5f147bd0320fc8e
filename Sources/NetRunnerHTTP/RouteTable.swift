/// A server's routes, written once: each template with the methods it takes.
///
/// A template is a path with parameters (`/v1/models/{id}/classify`). The method middleware
/// answers 405 from the table, and a path is matched to its template the way the router matches
/// it (empty segments skipped, `{name}` one segment).
package struct RouteTable: Sendable {
    /// The methods of each template (`"GET, POST"`).
    package let allowed: [String: String]
    private let templates: [(template: String, segments: [Substring])]

    /// Creates a table.
    ///
    /// - Parameter allowed: The methods each template takes.
    package init(_ allowed: [String: String]) {
        self.allowed = allowed
        templates = allowed.keys.sorted().map { ($0, $0.split(separator: "/")) }
    }

    /// The template a path matches, or `nil`: the one with the most literal segments matched
    /// where several do (`/v2/health/ready` before `/v2/models/{name}`).
    ///
    /// - Parameter path: The request's path, without the query.
    /// - Returns: The template.
    package func template(for path: String) -> String? {
        let parts = path.split(separator: "/")
        var best: (template: String, literals: Int)? = nil
        for (template, segments) in templates where segments.count == parts.count {
            var literals = 0
            var matches = true
            for (segment, part) in zip(segments, parts) {
                if segment.first == "{" && segment.last == "}" { continue }
                guard segment == part else {
                    matches = false
                    break
                }
                literals += 1
            }
            if matches, literals > best?.literals ?? -1 { best = (template, literals) }
        }
        return best?.template
    }

    /// The methods a path's template takes, or `nil` for a path of no template.
    ///
    /// - Parameter path: The request's path.
    /// - Returns: `"GET, POST"` and the like.
    package func methods(for path: String) -> String? {
        template(for: path).flatMap { allowed[$0] }
    }
}
