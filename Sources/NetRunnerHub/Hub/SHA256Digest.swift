/// A SHA-256 digest as the hub names files: exactly 64 lowercase hexadecimal characters.
///
/// Made only from text that passes that check, so a digest a hub sends can be used in a path
/// (the cache's `blobs/sha256/<hex>.zip`, `partial/<hex>.part`) without becoming one:
/// `"../../escape"` or `"F3594F..."` never gets this far.
///
///     let digest = try SHA256Digest(validating: text)   // throws InvalidSHA256Digest
///     let path = cache.blobPath(sha256: digest, format: "zip")
public struct SHA256Digest: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The 64 lowercase hexadecimal characters.
    public let hex: String

    /// A digest from text that must be exactly 64 lowercase hexadecimal characters.
    ///
    /// - Parameter text: The digest, without a `sha256:` prefix.
    /// - Throws: ``InvalidSHA256Digest`` for anything else.
    public init(validating text: String) throws(InvalidSHA256Digest) {
        let bytes = text.utf8
        guard bytes.count == 64, bytes.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
            throw InvalidSHA256Digest(text: text)
        }
        hex = text
    }

    /// Decodes one JSON string, validated.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            self = try SHA256Digest(validating: text)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    /// Encodes the hex text as one JSON string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }

    /// The hex text.
    public var description: String { hex }
}
