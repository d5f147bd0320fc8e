import FoundationEssentials
import NetRunner

/// A test bundle's pose label (`inference_results.pose`).
///
///     {"keypoints": [{"name": "nose", "x": 294.5, "y": 202.6}, ...], "box": [x, y, width, height]}
///
/// Positions in pixels of the image as shown; the keypoints listed are the labelled ones (COCO's
/// names; others count for PCK only); `box`, the person's box, is optional (else the labelled
/// keypoints' bounding box).
struct PoseLabel: Equatable {
    /// A labelled keypoint.
    struct Point: Equatable {
        var name: String
        var x: Double
        var y: Double
    }

    /// The labelled keypoints, in the label's order, each name once.
    var keypoints: [Point]
    /// The person's box: the label's, else the keypoints' bounding box.
    var width: Double
    /// See ``width``.
    var height: Double

    /// The JSON form.
    private struct Form: Decodable {
        struct Keypoint: Decodable {
            var name: String
            var x: Double
            var y: Double
        }
        var keypoints: [Keypoint]
        var box: [Double]?
    }

    /// The largest coordinate a label may hold, in pixels.
    static let limit = 1e9

    /// Reads a label.
    ///
    /// - Parameter data: The JSON of `inference_results.pose`.
    /// - Returns: The label, or why it cannot be read.
    static func parse(_ data: Data) -> Result<PoseLabel, LabelProblem> {
        let form: Form
        do {
            form = try JSONDecoder().decode(Form.self, from: data)
        } catch {
            return .failure(.init(text: "a pose label is {\"keypoints\": [{\"name\", \"x\", \"y\"}], \"box\"?}"))
        }
        guard !form.keypoints.isEmpty else { return .failure(.init(text: "a pose label lists at least one keypoint")) }
        let fits = { (value: Double) in value.isFinite && abs(value) < limit }
        guard form.keypoints.allSatisfy({ fits($0.x) && fits($0.y) && !$0.name.isEmpty }) else {
            return .failure(.init(text: "keypoints need a name and x, y in pixels (finite, under 1e9)"))
        }
        guard Set(form.keypoints.map(\.name)).count == form.keypoints.count else {
            return .failure(.init(text: "a keypoint is labelled twice"))
        }
        let points = form.keypoints.map { Point(name: $0.name, x: $0.x, y: $0.y) }
        if let box = form.box {
            guard box.count == 4, box.allSatisfy(fits), box[2] >= 0, box[3] >= 0 else {
                return .failure(.init(text: "box is [x, y, width, height] in pixels, width and height not negative"))
            }
            return .success(PoseLabel(keypoints: points, width: box[2], height: box[3]))
        }
        let xs = points.map(\.x)
        let ys = points.map(\.y)
        return .success(
            PoseLabel(
                keypoints: points, width: (xs.max() ?? 0) - (xs.min() ?? 0),
                height: (ys.max() ?? 0) - (ys.min() ?? 0)))
    }
}

/// Why a label cannot be scored, as the report says it.
struct LabelProblem: Error, Equatable {
    var text: String
}
