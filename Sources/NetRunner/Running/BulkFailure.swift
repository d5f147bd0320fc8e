/// Why one image of a bulk run failed, in one line.
public struct BulkFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// The message (it names the file).
    public var message: String

    /// Creates a failure from the error an image raised.
    ///
    /// - Parameter error: The error.
    public init(_ error: any Error) {
        message = String(describing: error).split(whereSeparator: \.isNewline).joined(separator: " ")
    }

    /// The message.
    public var description: String { message }
}
