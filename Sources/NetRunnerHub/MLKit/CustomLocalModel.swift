/// A model shipped with the application, the fallback until a remote one is downloaded (ML
/// Kit's `CustomLocalModel`).
public struct CustomLocalModel: Hashable, Sendable {
    /// The model's path: a `.tflite`, a bundle folder or a zipped bundle.
    public let modelPath: String

    /// A local model at a path.
    public init(modelPath: String) {
        self.modelPath = modelPath
    }
}
