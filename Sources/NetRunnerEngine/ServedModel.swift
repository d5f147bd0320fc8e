public import NetRunner

/// A model the server serves, under the id clients name it by.
public struct ServedModel: Sendable {
    /// The id in URLs (`/v1/models/{id}`, `/v2/models/{id}`): a bundle's `model.json` id, a
    /// `.tflite` file's name without its extension, as `evaluate` finds models.
    public let id: String
    /// The model, read once and shared by every worker.
    public let model: LoadedModel
    /// The task it runs.
    public let kind: ImageTask.Kind
    /// Where it came from, for people: `embedded`, or a path.
    public let origin: String

    /// Creates a served model.
    ///
    /// - Parameters:
    ///   - id: The id clients use.
    ///   - model: The loaded model.
    ///   - origin: Where it came from.
    public init(id: String, model: LoadedModel, origin: String) {
        self.id = id
        self.model = model
        self.kind = ImageTask.kind(of: model)
        self.origin = origin
    }
}
