import FoundationEssentials
import NetRunner

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One image's pose scores: PCK@0.2 of the torso diameter and COCO's object keypoint
/// similarity (OKS).
///
/// - PCK: a labelled keypoint is right when the answer's keypoint of the same name lies within
///   ``pckFraction`` of the torso diameter of it (the labelled `left_shoulder` to `right_hip`
///   distance, as DeepPose defines it; without those two, the larger side of the person's box).
/// - OKS: the mean over the labelled COCO keypoints of `exp(-d² / (2 · area · (2σ)²))`, σ
///   COCO's per-keypoint sigma (``sigmas``), `area` the person's box's width times height,
///   as pycocotools computes it (a keypoint the answer lacks adds 0).
///
/// `tools/pose/metrics.py` computes the same in Python.
struct PoseScore: Equatable {
    /// The share of the torso diameter a keypoint may be off by.
    static let pckFraction = 0.2

    /// COCO's keypoint sigmas (pycocotools' `cocoeval.py`), by name.
    static let sigmas: [String: Double] = Dictionary(
        uniqueKeysWithValues: zip(
            PoseEstimator.keypointNames,
            [0.26, 0.25, 0.25, 0.35, 0.35, 0.79, 0.79, 0.72, 0.72, 0.62, 0.62, 1.07, 1.07, 0.87, 0.87, 0.89, 0.89]
                .map { $0 / 10.0 }))

    /// Each labelled keypoint's name and whether the answer got it right, in the label's order.
    var keypoints: [(name: String, right: Bool)]
    /// The image's OKS, 0 to 1.
    var oks: Double

    /// Labelled keypoints the answer got right.
    var right: Int { keypoints.count { $0.right } }
    /// The image's PCK, 0 to 1.
    var pck: Double { keypoints.isEmpty ? 0 : Double(right) / Double(keypoints.count) }

    static func == (lhs: PoseScore, rhs: PoseScore) -> Bool {
        lhs.oks == rhs.oks && lhs.keypoints.map(\.name) == rhs.keypoints.map(\.name)
            && lhs.keypoints.map(\.right) == rhs.keypoints.map(\.right)
    }

    /// Scores an answer against a label.
    ///
    /// - Parameters:
    ///   - answer: The model's keypoints.
    ///   - label: The label.
    init(_ answer: [PoseKeypoint], label: PoseLabel) {
        var found: [String: (x: Double, y: Double)] = [:]
        for keypoint in answer where keypoint.x.isFinite && keypoint.y.isFinite {
            found[keypoint.name] = (Double(keypoint.x), Double(keypoint.y))
        }
        let truth = Dictionary(label.keypoints.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let torso: Double
        if let shoulder = truth["left_shoulder"], let hip = truth["right_hip"] {
            torso = hypot(shoulder.x - hip.x, shoulder.y - hip.y)
        } else {
            torso = max(label.width, label.height)
        }
        let threshold = Self.pckFraction * torso
        let area = label.width * label.height
        var similarity = 0.0
        var scored = 0
        var keypoints: [(name: String, right: Bool)] = []
        for point in label.keypoints {
            var squared: Double? = nil
            if let answer = found[point.name] {
                squared = (answer.x - point.x) * (answer.x - point.x) + (answer.y - point.y) * (answer.y - point.y)
            }
            keypoints.append((point.name, squared.map { $0.squareRoot() <= threshold } ?? false))
            guard let sigma = Self.sigmas[point.name] else { continue }
            scored += 1
            if let squared {
                let k = 2 * sigma
                similarity += exp(-squared / (k * k) / (area + Double.ulpOfOne) / 2)
            }
        }
        self.keypoints = keypoints
        self.oks = scored == 0 ? 0 : similarity / Double(scored)
    }
}
