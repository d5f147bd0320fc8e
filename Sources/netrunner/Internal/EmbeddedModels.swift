// The models linked into the executable.
//
// Invariants: the pointers CEmbeddedModels returns point into the executable's read-only
// data, valid for the whole process; they are copied into `Data` before use.

internal import CEmbeddedModels
import FoundationEssentials

/// The default models `netrunner` uses when no `--model` is given.
enum EmbeddedModels {
    /// The ImageNet MobileNetV2 (uint8) classifier.
    static var classifier: Data { bytes(nr_embedded_classifier) }

    /// The ImageNet labels of the classifier.
    static var classifierLabels: String { String(decoding: bytes(nr_embedded_classifier_labels), as: UTF8.self) }

    /// The BlazeFace short-range face detector.
    static var detector: Data { bytes(nr_embedded_detector) }

    /// The classifier bundle's model.json.
    static var classifierDescription: Data { bytes(nr_embedded_classifier_description) }

    /// The detector bundle's model.json.
    static var detectorDescription: Data { bytes(nr_embedded_detector_description) }

    /// The names shown for the embedded models.
    static let classifierName = "embedded mobilenet_v2_1.0_224_uint8.tiobundle"
    static let detectorName = "embedded face_detection_short_range.tiobundle"

    private static func bytes(_ accessor: (UnsafeMutablePointer<Int>?) -> UnsafePointer<UInt8>?) -> Data {
        var size = 0
        guard let start = accessor(&size), size > 0 else { return Data() }
        return Data(bytes: start, count: size)
    }
}
