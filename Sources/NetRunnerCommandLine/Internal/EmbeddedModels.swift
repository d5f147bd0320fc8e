// The models linked into the executable.
//
// Invariants: the pointers CEmbeddedModels returns point into the executable's read-only
// data, valid for the whole process; they are copied into `Data` before use.

import ArgumentParser
internal import CEmbeddedModels
import FoundationEssentials
import NetRunner

/// The default models `netrunner` uses when no `--model` is given: the bundles in
/// `Models/bundles/`, linked in whole (model, `model.json`, labels).
enum EmbeddedModels {
    /// The tasks a model is linked in for.
    static let kinds: [ImageTask.Kind] = [.classification, .detection]

    /// The embedded bundle for a task: MobileNetV2 (uint8, ImageNet) for classification,
    /// BlazeFace short-range for detection.
    ///
    /// - Parameter kind: The task.
    /// - Returns: The bundle, held in memory.
    /// - Throws: ``ModelBundleError`` if the linked `model.json` is damaged;
    ///   `ValidationError` for a task no model is linked in for (give `--model`).
    static func source(for kind: ImageTask.Kind) throws -> ModelSource {
        switch kind {
        case .classification:
            return .bundleData(
                name: classifierName, modelData: bytes(nr_embedded_classifier),
                description: try ModelDescription.parse(
                    bytes(nr_embedded_classifier_description), source: classifierName + "/model.json"),
                assets: ["labels.txt": bytes(nr_embedded_classifier_labels)])
        case .detection:
            return .bundleData(
                name: detectorName, modelData: bytes(nr_embedded_detector),
                description: try ModelDescription.parse(
                    bytes(nr_embedded_detector_description), source: detectorName + "/model.json"),
                assets: ["labels.txt": Data("face\n".utf8)])
        default:
            throw ValidationError("No model is built in for \(kind): give --model.")
        }
    }

    /// The names shown for the embedded models.
    static let classifierName = "embedded mobilenet_v2_1.0_224_uint8.tiobundle"
    static let detectorName = "embedded face_detection_short_range.tiobundle"

    private static func bytes(_ accessor: (UnsafeMutablePointer<Int>?) -> UnsafePointer<UInt8>?) -> Data {
        var size = 0
        guard let start = accessor(&size), size > 0 else { return Data() }
        return Data(bytes: start, count: size)
    }
}
