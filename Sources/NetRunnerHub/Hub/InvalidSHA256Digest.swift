/// Text that is not a SHA-256 digest (64 lowercase hexadecimal characters).
public struct InvalidSHA256Digest: Error, Equatable, Sendable, CustomStringConvertible {
    /// The text as given.
    public let text: String

    /// An error about `text`.
    public init(text: String) {
        self.text = text
    }

    /// What is wrong: `"../../x" is not a SHA-256 digest (64 lowercase hexadecimal characters)`.
    public var description: String {
        "\(String(text.prefix(80)).debugDescription) is not a SHA-256 digest (64 lowercase hexadecimal characters)"
    }
}
