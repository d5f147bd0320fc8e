/// Non-maximum suppression: keeps the best of overlapping boxes.
public enum NonMaxSuppression {
    /// How overlapping boxes are merged.
    public enum Mode: String, Sendable, Codable, CaseIterable {
        /// The best-scoring box of each overlapping group survives; the others are dropped.
        case hard
        /// MediaPipe's "weighted" NMS: the group's boxes (and keypoints) are averaged,
        /// weighted by score; the score is the best one's.
        case weighted
    }

    /// A candidate box before suppression.
    public struct Candidate: Equatable, Sendable {
        /// The box.
        public var box: BoundingBox
        /// The score.
        public var score: Float
        /// The class index.
        public var classIndex: Int
        /// Landmarks that travel with the box.
        public var keypoints: [Keypoint]

        /// Creates a candidate.
        ///
        /// - Parameters:
        ///   - box: The box.
        ///   - score: The score.
        ///   - classIndex: The class index.
        ///   - keypoints: Landmarks, if any.
        public init(box: BoundingBox, score: Float, classIndex: Int = 0, keypoints: [Keypoint] = []) {
            self.box = box
            self.score = score
            self.classIndex = classIndex
            self.keypoints = keypoints
        }
    }

    /// Suppresses overlapping candidates.
    ///
    /// - Parameters:
    ///   - candidates: The boxes, in any order.
    ///   - iouThreshold: Boxes overlapping the kept one by more than this are merged into it.
    ///   - mode: Hard suppression or weighted blending.
    ///   - perClass: Only boxes of the same class suppress each other.
    ///   - maxResults: The most boxes to keep (`nil`: no limit).
    /// - Returns: The kept boxes, best score first.
    /// - Complexity: O(n²) in the number of candidates.
    public static func apply(
        _ candidates: [Candidate], iouThreshold: Float, mode: Mode = .hard, perClass: Bool = true,
        maxResults: Int? = nil
    ) -> [Candidate] {
        var remaining = candidates.sortedByDescendingScore(\.score)
        var kept: [Candidate] = []
        while let best = remaining.first {
            if let maxResults, kept.count >= maxResults { break }
            var group: [Candidate] = []
            var rest: [Candidate] = []
            for candidate in remaining {
                let sameClass = !perClass || candidate.classIndex == best.classIndex
                if sameClass && candidate.box.intersectionOverUnion(with: best.box) > iouThreshold {
                    group.append(candidate)
                } else {
                    rest.append(candidate)
                }
            }
            if group.isEmpty { group = [best] }  // a degenerate box does not overlap itself
            rest.removeAll { $0 == best && !group.contains($0) }
            kept.append(mode == .weighted ? blend(group, best: best) : best)
            remaining = rest
        }
        return kept
    }

    /// The score-weighted average of a group's boxes and keypoints, with the best's score.
    private static func blend(_ group: [Candidate], best: Candidate) -> Candidate {
        guard group.count > 1 else { return best }
        let total = group.reduce(0) { $0 + $1.score }
        guard total > 0 else { return best }
        var box = BoundingBox(minX: 0, minY: 0, maxX: 0, maxY: 0)
        var keypoints = [Keypoint](repeating: Keypoint(x: 0, y: 0), count: best.keypoints.count)
        for candidate in group {
            let weight = candidate.score / total
            box.minX += candidate.box.minX * weight
            box.minY += candidate.box.minY * weight
            box.maxX += candidate.box.maxX * weight
            box.maxY += candidate.box.maxY * weight
            for (index, point) in candidate.keypoints.prefix(keypoints.count).enumerated() {
                keypoints[index].x += point.x * weight
                keypoints[index].y += point.y * weight
            }
        }
        return Candidate(box: box, score: best.score, classIndex: best.classIndex, keypoints: keypoints)
    }
}
