public import NetRunner

/// COCO-style mean average precision for object detection, computed as pycocotools' `COCOeval`
/// does for boxes over all areas with at most 100 detections per image.
///
/// Add each image's ground truth and detections with ``add(truth:detections:)``; then
/// ``result()`` gives mAP at IoU 0.5, mAP averaged over IoU 0.5, 0.55, ... 0.95, and each
/// class's AP at both. Per image and class, detections are matched best score first to the
/// unmatched ground-truth box of highest IoU at or above the threshold; over all images each
/// class's precision is made non-increasing and sampled at 101 recall points. Classes with no
/// ground truth are left out of the means; a class with ground truth and no detections has AP 0.
public struct MeanAveragePrecision: Sendable {
    /// A box of a known class: an annotation.
    public struct LabeledBox: Equatable, Sendable, Codable {
        /// The class.
        public var label: String
        /// The box.
        public var box: BoundingBox

        /// Creates an annotation.
        ///
        /// - Parameters:
        ///   - label: The class.
        ///   - box: The box.
        public init(label: String, box: BoundingBox) {
            self.label = label
            self.box = box
        }
    }

    /// A detection: a box, its class and its score.
    public struct ScoredBox: Equatable, Sendable, Codable {
        /// The class.
        public var label: String
        /// The box.
        public var box: BoundingBox
        /// The detector's confidence.
        public var score: Float

        /// Creates a detection.
        ///
        /// - Parameters:
        ///   - label: The class.
        ///   - box: The box.
        ///   - score: The detector's confidence.
        public init(label: String, box: BoundingBox, score: Float) {
            self.label = label
            self.box = box
            self.score = score
        }
    }

    /// The figures of one evaluation.
    public struct Result: Equatable, Sendable, Codable {
        /// Mean AP at IoU 0.5 (COCO's AP50, Pascal-VOC-like).
        public var mAP50: Double
        /// Mean AP over IoU 0.5:0.05:0.95 (COCO's primary AP).
        public var mAP50to95: Double
        /// Each class's AP at IoU 0.5, for classes with ground truth.
        public var perClassAP50: [String: Double]
        /// Each class's AP over IoU 0.5:0.95, for classes with ground truth.
        public var perClassAP50to95: [String: Double]
        /// Each class's number of ground-truth boxes.
        public var groundTruthCount: [String: Int]
    }

    /// The IoU thresholds from 0.5 to 0.95 in steps of 0.05.
    ///
    /// They are, to the last bit, as pycocotools' `np.linspace`
    /// gives them (its 0.9 is 0.8999999999999999), so that IoUs on a threshold match alike.
    public static let iouThresholds: [Double] = {
        let step: Double = (0.95 - 0.5) / 9
        return (0..<10).map { (i: Int) -> Double in i == 9 ? 0.95 : Double(i) * step + 0.5 }
    }()
    /// The recall points precision is sampled at, from 0 to 1 in steps of 0.01.
    ///
    /// They are as `np.linspace` gives them.
    static let recallPoints: [Double] = (0...100).map { Double($0) * 0.01 }
    /// Detections kept per image, best first (COCO's `maxDets`).
    public var maxDetectionsPerImage: Int

    /// Per class: the ground-truth count and, per detection, its score and whether it matched
    /// at each threshold.
    private var classes: [String: ClassRecord] = [:]

    private struct ClassRecord: Sendable {
        var truthCount = 0
        var scores: [Float] = []
        var matched: [[Bool]] = []  // [detection][threshold]
    }

    /// Creates an empty evaluation.
    ///
    /// - Parameter maxDetectionsPerImage: Detections kept per image, best first; 100 as COCO.
    public init(maxDetectionsPerImage: Int = 100) {
        self.maxDetectionsPerImage = maxDetectionsPerImage
    }

    /// Adds one image.
    ///
    /// - Parameters:
    ///   - truth: The image's annotated objects.
    ///   - detections: What the detector found in it.
    public mutating func add(truth: [LabeledBox], detections: [ScoredBox]) {
        let labels = Set(truth.map(\.label)).union(detections.map(\.label))
        for label in labels.sorted() {
            let truthBoxes = truth.filter { $0.label == label }.map(\.box)
            let found = Array(
                detections.filter { $0.label == label }.sortedByDescendingScore(\.score).prefix(maxDetectionsPerImage))
            var record = classes[label] ?? ClassRecord()
            record.truthCount += truthBoxes.count
            let ious = found.map { detection in truthBoxes.map { Self.iou(detection.box, $0) } }
            var taken = Array(
                repeating: Array(repeating: false, count: truthBoxes.count), count: Self.iouThresholds.count)
            var matches = Array(repeating: Array(repeating: false, count: Self.iouThresholds.count), count: found.count)
            for (t, threshold) in Self.iouThresholds.enumerated() {
                for d in found.indices {
                    var best = min(threshold, 1 - 1e-10)
                    var match: Int?
                    for g in truthBoxes.indices where !taken[t][g] && ious[d][g] >= best {
                        best = ious[d][g]
                        match = g
                    }
                    if let match {
                        taken[t][match] = true
                        matches[d][t] = true
                    }
                }
            }
            for (d, detection) in found.enumerated() {
                record.scores.append(detection.score)
                record.matched.append(matches[d])
            }
            classes[label] = record
        }
    }

    /// Computes the figures over every image added.
    ///
    /// - Returns: The mean and per-class APs; means are 0 when no class has ground truth.
    public func result() -> Result {
        var ap50: [String: Double] = [:]
        var ap50to95: [String: Double] = [:]
        for (label, record) in classes where record.truthCount > 0 {
            // Across images, best first; equal scores keep the order images were added in.
            let order = record.scores.indices.sortedByDescendingScore { record.scores[$0] }
            let perThreshold = Self.iouThresholds.indices.map { t in
                Self.averagePrecision(matched: order.map { record.matched[$0][t] }, truthCount: record.truthCount)
            }
            ap50[label] = perThreshold[0]
            ap50to95[label] = perThreshold.reduce(0, +) / Double(perThreshold.count)
        }
        func mean(_ values: [String: Double]) -> Double {
            values.isEmpty ? 0 : values.values.reduce(0, +) / Double(values.count)
        }
        return Result(
            mAP50: mean(ap50), mAP50to95: mean(ap50to95), perClassAP50: ap50, perClassAP50to95: ap50to95,
            groundTruthCount: classes.mapValues(\.truthCount))
    }

    /// AP at one threshold from detections sorted best first: 101-point interpolated precision.
    static func averagePrecision(matched: [Bool], truthCount: Int) -> Double {
        var recall: [Double] = []
        var precision: [Double] = []
        var truePositives = 0.0
        var falsePositives = 0.0
        for isMatch in matched {
            if isMatch { truePositives += 1 } else { falsePositives += 1 }
            recall.append(truePositives / Double(truthCount))
            precision.append(truePositives / (truePositives + falsePositives + Double.ulpOfOne))
        }
        for i in stride(from: precision.count - 1, to: 0, by: -1) where precision[i] > precision[i - 1] {
            precision[i - 1] = precision[i]
        }
        var sum = 0.0
        var start = 0
        for point in recallPoints {
            // The first detection whose recall reaches the point (searchsorted, side "left").
            while start < recall.count && recall[start] < point { start += 1 }
            guard start < recall.count else { break }
            sum += precision[start]
        }
        return sum / Double(recallPoints.count)
    }

    /// IoU in double precision, as pycocotools computes it.
    static func iou(_ a: BoundingBox, _ b: BoundingBox) -> Double {
        let width = max(0, min(Double(a.maxX), Double(b.maxX)) - max(Double(a.minX), Double(b.minX)))
        let height = max(0, min(Double(a.maxY), Double(b.maxY)) - max(Double(a.minY), Double(b.minY)))
        let overlap = width * height
        let union = Double(a.width) * Double(a.height) + Double(b.width) * Double(b.height) - overlap
        return union > 0 ? overlap / union : 0
    }
}
