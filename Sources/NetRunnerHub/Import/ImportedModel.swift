public import NetRunner

/// A model installed into a models folder by ``ModelImporter``.
public struct ImportedModel: Equatable, Sendable {
    /// Its id, as `evaluate` and `serve` name it (a bundle's `model.json` id, a `.tflite`
    /// file's name without its extension).
    public var id: String
    /// Its name (the description's, else the id).
    public var name: String
    /// Where it was installed: a bundle folder or a `.tflite` file in the models folder.
    public var path: String
    /// The task it runs as.
    public var kind: ImageTask.Kind
    /// The SHA-256 of what was imported (the zip, the `.tflite`; for a folder, of its model file).
    public var sha256: String
    /// The bytes imported.
    public var byteCount: Int
    /// Whether it replaced a model with the same id.
    public var replaced: Bool
}
