/// Score arithmetic shared by the classifier and the detectors: dequantization, softmax,
/// sigmoid and top-k selection.
package enum Scores {
    /// The real values of quantized scores: `scale * (q - zeroPoint)`.
    ///
    /// - Parameters:
    ///   - values: The quantized values.
    ///   - scale: The quantization scale.
    ///   - zeroPoint: The quantization zero point.
    /// - Returns: The dequantized values.
    /// - Complexity: O(n).
    package static func dequantize<T: BinaryInteger>(_ values: some Sequence<T>, scale: Float, zeroPoint: Int)
        -> [Float]
    {
        values.map { scale * Float(Int($0) - zeroPoint) }
    }

    /// The softmax of logits, computed stably (the largest logit is subtracted first).
    ///
    /// - Parameter logits: The values to normalise.
    /// - Returns: Probabilities summing to 1.
    /// - Complexity: O(n).
    package static func softmax(_ logits: [Float]) -> [Float] {
        guard let largest = logits.max() else { return [] }
        let exponentials = logits.map { expf($0 - largest) }
        let sum = exponentials.reduce(0, +)
        return exponentials.map { $0 / sum }
    }

    /// The logistic sigmoid `1 / (1 + e^-x)`.
    ///
    /// - Parameter x: The logit.
    /// - Returns: A value in (0, 1).
    package static func sigmoid(_ x: Float) -> Float {
        1 / (1 + expf(-x))
    }

    /// The indices of the `k` highest scores, highest first; ties go to the lower index.
    ///
    /// - Parameters:
    ///   - scores: The scores.
    ///   - k: How many to keep: none when zero or negative, every score when past their count
    ///     (a client's `1e13` costs no more than the scores).
    ///   - threshold: Scores below this are left out.
    ///   - include: Keeps only the indices it accepts (allowlist/denylist filtering).
    /// - Returns: At most `k` indices.
    /// - Complexity: O(n log k).
    package static func topK(
        _ scores: [Float], k: Int, threshold: Float = -.infinity, where include: (Int) -> Bool = { _ in true }
    ) -> [Int] {
        let k = min(k, scores.count)
        guard k > 0 else { return [] }
        // A small sorted buffer: (score desc, index asc); n is at most a few thousand.
        var best: [(score: Float, index: Int)] = []
        best.reserveCapacity(k + 1)
        for (index, score) in scores.enumerated() where score >= threshold && !score.isNaN && include(index) {
            if best.count == k, let last = best.last, !(score > last.score) { continue }
            var position = best.count
            while position > 0 && score > best[position - 1].score { position -= 1 }
            best.insert((score, index), at: position)
            if best.count > k { best.removeLast() }
        }
        return best.map(\.index)
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension Sequence {
    /// The elements, best score first; equal scores keep their order (a stable sort, as NumPy's
    /// mergesort and the Task Library order them).
    ///
    /// - Parameter score: An element's score.
    /// - Returns: The sorted elements.
    package func sortedByDescendingScore(_ score: (Element) -> Float) -> [Element] {
        enumerated().map { (score: score($0.element), offset: $0.offset, element: $0.element) }
            .sorted { $0.score != $1.score ? $0.score > $1.score : $0.offset < $1.offset }
            .map(\.element)
    }
}
