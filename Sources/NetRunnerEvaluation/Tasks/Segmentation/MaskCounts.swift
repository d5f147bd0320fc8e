import NetRunner
import NetRunnerImage

/// What a segmentation answer got right, class by class, against a label mask: the pixel counts
/// mean IoU and pixel accuracy are made of, added up over images.
///
/// Only pixels the label scores count (not ``CategoryMask/unknown``, Pascal VOC's 255). For a
/// class `c`: true positives, label and answer `c`; false positives, answer `c` on a pixel
/// labelled otherwise; false negatives, label `c` answered otherwise (an unknown answer
/// included). IoU = TP / (TP + FP + FN); the mean IoU is over the classes present in a label or
/// an answer (TP + FP + FN > 0), Pascal VOC's way; pixel accuracy is the right pixels over the
/// labelled ones. `tools/pose/metrics.py` computes the same in Python.
struct MaskCounts: Equatable {
    /// True positives by class index.
    var truePositives = [Int](repeating: 0, count: 256)
    /// False positives by class index.
    var falsePositives = [Int](repeating: 0, count: 256)
    /// False negatives by class index.
    var falseNegatives = [Int](repeating: 0, count: 256)
    /// Pixels the labels score.
    var labelled = 0

    /// No pixels yet.
    init() {}

    /// The counts of one answer, its label made the answer's size by nearest neighbour if it is
    /// another.
    ///
    /// - Parameters:
    ///   - answer: The answer's mask.
    ///   - label: The label's mask.
    init(_ answer: CategoryMask, label: CategoryMask) {
        let truth = label.resized(to: PixelSize(width: answer.width, height: answer.height))
        let unknown = CategoryMask.unknown
        truth.classIndices.withUnsafeBufferPointer { labels in
            answer.classIndices.withUnsafeBufferPointer { answers in
                for (expected, found) in zip(labels, answers) where expected != unknown {
                    labelled += 1
                    if expected == found {
                        truePositives[Int(expected)] += 1
                    } else {
                        falseNegatives[Int(expected)] += 1
                        if found != unknown { falsePositives[Int(found)] += 1 }
                    }
                }
            }
        }
    }

    /// Adds another image's counts.
    ///
    /// - Parameter other: The counts.
    mutating func add(_ other: MaskCounts) {
        for c in 0..<256 {
            truePositives[c] += other.truePositives[c]
            falsePositives[c] += other.falsePositives[c]
            falseNegatives[c] += other.falseNegatives[c]
        }
        labelled += other.labelled
    }

    /// The classes present in a label or an answer, ascending.
    var presentClasses: [Int] {
        (0..<256).filter { truePositives[$0] + falsePositives[$0] + falseNegatives[$0] > 0 }
    }

    /// A class's IoU; 0 for a class not present.
    ///
    /// - Parameter index: The class index.
    /// - Returns: TP / (TP + FP + FN).
    func intersectionOverUnion(of index: Int) -> Double {
        let union = truePositives[index] + falsePositives[index] + falseNegatives[index]
        return union == 0 ? 0 : Double(truePositives[index]) / Double(union)
    }

    /// The mean IoU over the classes present; 0 when none is.
    var meanIntersectionOverUnion: Double {
        let present = presentClasses
        return present.isEmpty ? 0 : present.map(intersectionOverUnion(of:)).reduce(0, +) / Double(present.count)
    }

    /// Right pixels over labelled pixels; 0 when none is labelled.
    var pixelAccuracy: Double {
        labelled == 0 ? 0 : Double(truePositives.reduce(0, +)) / Double(labelled)
    }
}
