public import FoundationEssentials

/// Where a model comes from: every task, command and server names its model with one of these,
/// and ``LoadedModel`` reads it the same way for all of them.
///
///     let model = try LoadedModel(.path("Models/bundles/face_detection_short_range.tiobundle"))
///     let detector = try ObjectDetector(model: model)
public enum ModelSource: Equatable, Hashable, Sendable {
    /// A path as a user gives `--model`: a bundle folder (`.tiobundle`, `.tfbundle`, or any
    /// folder with a `model.json`), a zipped bundle, or a `.tflite` file (its own TFLite
    /// metadata, else a `model.json` beside it naming it, else defaults).
    case path(String)
    /// A bundle held in memory, such as a model linked into an executable or received over the
    /// network: the model's bytes, its `model.json` (if any), and the files of its `assets/`
    /// folder by name (the labels files the description names).
    case bundleData(name: String, modelData: Data, description: ModelDescription?, assets: [String: Data])
}
