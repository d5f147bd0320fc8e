public import NetRunner

/// A downloaded, unpacked and validated model waiting in a hidden staging folder of the models
/// folder (``ModelImporter/stage(from:sha256:progress:)``), not yet visible to anyone.
///
/// Install it with ``ModelImporter/install(_:replace:progress:)``; releasing it removes the
/// staging folder and whatever is still in it.
public final class StagedModel: Sendable {
    /// Its id (the description's, else the `.tflite` file's name without the extension).
    public let id: String
    /// Its name (the description's, else the id).
    public let name: String
    /// The task it runs as.
    public let kind: ImageTask.Kind
    /// The SHA-256 of what was imported.
    public let sha256: String
    /// The bytes imported.
    public let byteCount: Int
    /// Where it came from (the URL or path given, a URL's user and password masked).
    public let source: String
    /// Where it is staged (a bundle folder or a `.tflite` file).
    public let path: String
    let folder: StagingFolder

    init(
        id: String, name: String, kind: ImageTask.Kind, sha256: String, byteCount: Int, source: String,
        path: String, folder: StagingFolder
    ) {
        self.id = id
        self.name = name
        self.kind = kind
        self.sha256 = sha256
        self.byteCount = byteCount
        self.source = source
        self.path = path
        self.folder = folder
    }
}
