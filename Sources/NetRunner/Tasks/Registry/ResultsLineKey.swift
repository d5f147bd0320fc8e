/// A key of a results line, by its name: what a ``VisionTaskDefinition`` writes its part with
/// (`inference_results`, its ``ImageTask/Kind``, keys of its own).
public struct ResultsLineKey: CodingKey, Hashable, Sendable, ExpressibleByStringLiteral {
    /// The key.
    public var stringValue: String
    /// `nil`: a results line has no integer keys.
    public var intValue: Int? { nil }

    /// The key of this name.
    ///
    /// - Parameter stringValue: The name.
    public init(stringValue: String) {
        self.stringValue = stringValue
    }

    /// `nil`: a results line has no integer keys.
    ///
    /// - Parameter intValue: The integer.
    public init?(intValue: Int) {
        return nil
    }

    /// The key of this name.
    ///
    /// - Parameter value: The name.
    public init(stringLiteral value: String) {
        self.stringValue = value
    }

    /// The key of a task's results: `inference_results.<kind>`.
    ///
    /// - Parameter kind: The task.
    /// - Returns: The key.
    public static func results(of kind: ImageTask.Kind) -> ResultsLineKey {
        ResultsLineKey(stringValue: kind.rawValue)
    }

    /// `inference_results`, the object every task's results go under.
    public static let inferenceResults: ResultsLineKey = "inference_results"
}
