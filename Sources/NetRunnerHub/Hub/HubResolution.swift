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
    /// The file's SHA-256, hex.
    public var sha256: String
    /// The file's size in bytes.
    public var size: Int
    /// `zip` or `tflite`.
    public var format: String
    /// The path of the file on the hub (`/v1/blobs/sha256:<hex>`).
    public var download: String

    /// Creates a resolution.
    public init(
        name: String, reference: String, version: Int, sha256: String, size: Int, format: String, download: String
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
