package import NetRunner

/// A model the server serves, under the id clients name it by.
package struct ServedModel: Sendable {
    /// The id in URLs (`/v1/models/{id}`, `/v2/models/{id}`): a bundle's `model.json` id, a
    /// `.tflite` file's name without its extension, as `evaluate` finds models.
    package let id: String
    /// The model, read once and shared by every worker.
    package let model: LoadedModel
    /// The task it runs.
    package let kind: ImageTask.Kind
    /// Where it came from, for people: `embedded`, or a path.
    package let origin: String
    /// How many times its id was loaded again before this one (``InferenceEngine/load(_:)``):
    /// a worker drops what it made of another generation.
    package var generation = 0

    /// Creates a served model.
    ///
    /// - Parameters:
    ///   - id: The id clients use.
    ///   - model: The loaded model.
    ///   - origin: Where it came from.
    package init(id: String, model: LoadedModel, origin: String) {
        self.id = id
        self.model = model
        self.kind = ImageTask.kind(of: model)
        self.origin = origin
    }
}

extension ServedModel {
    /// A load failure's reason for a client: as it is for one who may see this machine's paths,
    /// else with the model's path (and its folder, which a bundle's other files share) cut to
    /// the file name.
    ///
    /// - Parameters:
    ///   - reason: Why the model failed (``InferenceEngine/ModelState/failed(_:)``).
    ///   - showsPath: Whether the client may see where the model is on this machine.
    /// - Returns: The reason to show.
    package func failureReason(_ reason: String, showsPath: Bool) -> String {
        guard !showsPath, let slash = origin.lastIndex(of: "/") else { return reason }
        let fileName = String(origin[origin.index(after: slash)...])
        let folder = String(origin[...slash])
        return reason.replacing(origin, with: fileName).replacing(folder, with: "")
    }
}
