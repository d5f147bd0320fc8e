import Foundation
import NetRunnerTestSupport
import Testing

@testable import NetRunner
@testable import NetRunnerEvaluation

@Suite("COCO-style mean average precision")
struct MeanAveragePrecisionTests {
    struct Case: Decodable {
        struct Truth: Decodable {
            var image: Int
            var label: String
            var box: [Double]
        }
        struct Detection: Decodable {
            var image: Int
            var label: String
            var box: [Double]
            var score: Float
        }
        struct Reference: Decodable {
            var mAP50: Double
            var mAP50to95: Double
            var perClassAP50: [String: Double]
            var perClassAP50to95: [String: Double]

            enum CodingKeys: String, CodingKey {
                case mAP50, perClassAP50
                case mAP50to95 = "mAP50_95"
                case perClassAP50to95 = "perClassAP50_95"
            }
        }
        var truth: [Truth]
        var detections: [Detection]
        var reference: Reference
    }

    /// A COCO `[x, y, width, height]` box.
    func box(_ xywh: [Double]) -> BoundingBox {
        BoundingBox(
            minX: Float(xywh[0]), minY: Float(xywh[1]), maxX: Float(xywh[0] + xywh[2]), maxY: Float(xywh[1] + xywh[3]))
    }

    @Test("mAP@0.5, mAP@0.5:0.95 and per-class AP equal pycocotools' on a recorded case")
    func pycocotools() throws {
        let recorded = try JSONDecoder().decode(
            Case.self, from: Fixtures.data("Tests/Fixtures/Evaluation/coco_map_case.json"))
        #expect(recorded.truth.count > 20 && recorded.detections.count > 20)
        var evaluation = MeanAveragePrecision()
        let images = Set(recorded.truth.map(\.image)).union(recorded.detections.map(\.image)).sorted()
        for image in images {
            evaluation.add(
                truth: recorded.truth.filter { $0.image == image }.map { .init(label: $0.label, box: box($0.box)) },
                detections: recorded.detections.filter { $0.image == image }.map {
                    .init(label: $0.label, box: box($0.box), score: $0.score)
                })
        }
        let result = evaluation.result()
        let reference = recorded.reference
        #expect(abs(result.mAP50 - reference.mAP50) < 1e-6, "\(result.mAP50) vs \(reference.mAP50)")
        #expect(abs(result.mAP50to95 - reference.mAP50to95) < 1e-6, "\(result.mAP50to95) vs \(reference.mAP50to95)")
        #expect(Set(result.perClassAP50.keys) == Set(reference.perClassAP50.keys))
        for (label, ap) in reference.perClassAP50 {
            #expect(abs((result.perClassAP50[label] ?? -1) - ap) < 1e-6, "\(label) AP50")
            #expect(abs((result.perClassAP50to95[label] ?? -1) - reference.perClassAP50to95[label]!) < 1e-6, "\(label)")
        }
    }

    @Test("Perfect, empty, missed and duplicate detections")
    func edges() {
        let a = BoundingBox(minX: 0, minY: 0, maxX: 10, maxY: 10)
        let b = BoundingBox(minX: 50, minY: 50, maxX: 70, maxY: 80)
        var perfect = MeanAveragePrecision()
        perfect.add(
            truth: [.init(label: "x", box: a), .init(label: "y", box: b)],
            detections: [.init(label: "x", box: a, score: 0.9), .init(label: "y", box: b, score: 0.2)])
        // pycocotools divides by tp + fp + eps, so a perfect score is 1 - 2.2e-16, as here.
        #expect(abs(perfect.result().mAP50 - 1) < 1e-12 && abs(perfect.result().mAP50to95 - 1) < 1e-12)

        #expect(MeanAveragePrecision().result().mAP50 == 0)
        // The thresholds as NumPy's linspace(0.5, 0.95, 10) gives them, bit for bit.
        #expect(MeanAveragePrecision.iouThresholds[8] == 0.8999999999999999)
        #expect(MeanAveragePrecision.iouThresholds[7] == 0.85 && MeanAveragePrecision.iouThresholds.last == 0.95)

        // A class with ground truth and no detection counts as 0; one with detections and no
        // ground truth is left out.
        var missed = MeanAveragePrecision()
        missed.add(
            truth: [.init(label: "x", box: a), .init(label: "y", box: b)],
            detections: [.init(label: "x", box: a, score: 0.9), .init(label: "z", box: b, score: 0.9)])
        let result = missed.result()
        #expect(Set(result.perClassAP50.keys) == ["x", "y"])
        #expect(abs(result.perClassAP50["x"]! - 1) < 1e-12 && result.perClassAP50["y"] == 0)
        #expect(abs(result.mAP50 - 0.5) < 1e-12)
        #expect(result.groundTruthCount == ["x": 1, "y": 1, "z": 0])

        // A duplicate of a found object is a false positive after the true one: with recall
        // already 1, AP stays 1; ranked first (higher score, worse box at 0.75) it halves precision.
        var duplicate = MeanAveragePrecision()
        let shifted = BoundingBox(minX: 2, minY: 0, maxX: 12, maxY: 10)  // IoU 8/12 with a
        duplicate.add(
            truth: [.init(label: "x", box: a)],
            detections: [.init(label: "x", box: shifted, score: 0.95), .init(label: "x", box: a, score: 0.5)])
        let dup = duplicate.result()
        #expect(abs(dup.mAP50 - 1) < 1e-12)  // The shifted box matches at 0.5; the exact one is the duplicate.
        // At IoU >= 0.7 the shifted box misses and the exact one matches second: precision 0.5.
        #expect(abs(MeanAveragePrecision.iou(shifted, a) - 8.0 / 12.0) < 1e-12)
        // 4 thresholds (0.5-0.65) at AP 1, 6 (0.7-0.95) at AP 0.5.
        #expect(abs(dup.perClassAP50to95["x"]! - 0.7) < 1e-12)
    }
}
