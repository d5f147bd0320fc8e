import Testing

@testable import NetRunner

@Suite("Boxes and non-maximum suppression")
struct NonMaxSuppressionTests {
    func box(_ x: Float, _ y: Float, _ size: Float) -> BoundingBox {
        BoundingBox(minX: x, minY: y, maxX: x + size, maxY: y + size)
    }

    @Test("Intersection over union of identical, disjoint and half-overlapping boxes")
    func iou() {
        let a = box(0, 0, 10)
        #expect(a.intersectionOverUnion(with: a) == 1)
        #expect(a.intersectionOverUnion(with: box(20, 20, 10)) == 0)
        let half = BoundingBox(minX: 5, minY: 0, maxX: 15, maxY: 10)
        #expect(abs(a.intersectionOverUnion(with: half) - 50.0 / 150.0) < 1e-6)
        let empty = BoundingBox(minX: 3, minY: 3, maxX: 3, maxY: 3)
        #expect(empty.intersectionOverUnion(with: empty) == 0)
        #expect(
            BoundingBox(minX: -5, minY: 2, maxX: 50, maxY: 8).clamped(width: 20, height: 20)
                == BoundingBox(minX: 0, minY: 2, maxX: 20, maxY: 8))
    }

    @Test("Hard NMS keeps the best of each overlapping group, best first")
    func hard() {
        let candidates = [
            NonMaxSuppression.Candidate(box: box(0, 0, 10), score: 0.8),
            NonMaxSuppression.Candidate(box: box(1, 1, 10), score: 0.9),
            NonMaxSuppression.Candidate(box: box(50, 50, 10), score: 0.7),
            NonMaxSuppression.Candidate(box: box(51, 50, 10), score: 0.6, classIndex: 1),
        ]
        let kept = NonMaxSuppression.apply(candidates, iouThreshold: 0.3)
        #expect(kept.map(\.score) == [0.9, 0.7, 0.6])
        let classAgnostic = NonMaxSuppression.apply(candidates, iouThreshold: 0.3, perClass: false)
        #expect(classAgnostic.map(\.score) == [0.9, 0.7])
        #expect(NonMaxSuppression.apply(candidates, iouThreshold: 0.3, maxResults: 1).map(\.score) == [0.9])
    }

    @Test("Weighted NMS averages a group's boxes and keypoints by score and keeps the best score")
    func weighted() {
        let candidates = [
            NonMaxSuppression.Candidate(box: box(0, 0, 10), score: 0.75, keypoints: [Keypoint(x: 0, y: 0)]),
            NonMaxSuppression.Candidate(box: box(2, 2, 10), score: 0.25, keypoints: [Keypoint(x: 4, y: 8)]),
        ]
        let kept = NonMaxSuppression.apply(candidates, iouThreshold: 0.3, mode: .weighted)
        #expect(kept.count == 1)
        #expect(kept[0].score == 0.75)
        #expect(kept[0].box == BoundingBox(minX: 0.5, minY: 0.5, maxX: 10.5, maxY: 10.5))
        #expect(kept[0].keypoints == [Keypoint(x: 1, y: 2)])
    }
}
