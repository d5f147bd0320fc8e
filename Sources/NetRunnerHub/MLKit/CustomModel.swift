/// A downloaded, verified model (ML Kit's `CustomModel`): where it is and what it is.
public struct CustomModel: Equatable, Sendable {
    /// The model's name on the hub.
    public var name: String
    /// The version it is.
    public var version: Int
    /// Its size in bytes.
    public var size: Int
    /// The local file (a zipped bundle or a `.tflite`), verified; load it with
    /// `LoadedModel(.path(path))`.
    public var path: String
    /// Its SHA-256.
    public var hash: String
}
