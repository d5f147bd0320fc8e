/// What a reference resolves to on a hub: the version, its digest and where to download it.
///
/// `GET /v1/models/{name}/resolve?ref=...` for `flowers`, `flowers@7`, `flowers@production`. The
/// response's strong `ETag` is `"sha256:<hex>"`, so `If-None-Match` with the digest a client
/// holds is the update check (304 when unchanged).
public struct HubResolution: Codable, Equatable, Sendable {
    /// The model's name.
    public var name: String
    /// The reference as asked (`latest`, a version number, an alias, `sha256:<hex>`).
    public var reference: String
    /// The version it resolves to.
    public var version: Int
    /// The file's SHA-256 (validated when decoded: a hub's text never reaches a path unchecked).
    public var sha256: SHA256Digest
    /// The file's size in bytes.
    public var size: Int
    /// `zip` or `tflite`.
    public var format: String
    /// Where to download the file (from this hub `/v1/blobs/sha256:<hex>`).
    ///
    /// A URL reference resolved against the hub's address (RFC 3986); the client's key goes
    /// with it only when it resolves to the hub's own origin.
    public var download: String

    /// Creates a resolution.
    public init(
        name: String, reference: String, version: Int, sha256: SHA256Digest, size: Int, format: String, download: String
    ) {
        self.name = name
        self.reference = reference
        self.version = version
        self.sha256 = sha256
        self.size = size
        self.format = format
        self.download = download
    }
}
