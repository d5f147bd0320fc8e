import Testing

@testable import NetRunner

@Suite("Dequantization, softmax, sigmoid and top-k")
struct ScoresTests {
    @Test("Dequantization follows scale * (q - zeroPoint), for uint8 and int8")
    func dequantize() {
        #expect(Scores.dequantize([UInt8(0), 128, 255], scale: 1 / 256, zeroPoint: 0) == [0, 0.5, 255 / 256])
        #expect(Scores.dequantize([Int8(-128), 0, 127], scale: 0.5, zeroPoint: -128) == [0, 64, 127.5])
    }

    @Test("Softmax sums to 1, keeps the order, and survives large logits")
    func softmax() {
        let probabilities = Scores.softmax([1, 2, 3])
        #expect(abs(probabilities.reduce(0, +) - 1) < 1e-6)
        #expect(probabilities[2] > probabilities[1] && probabilities[1] > probabilities[0])
        #expect(abs(probabilities[2] - 0.665_240_94) < 1e-6)
        let large = Scores.softmax([1000, 1000])
        #expect(large == [0.5, 0.5])
        #expect(Scores.softmax([]) == [])
    }

    @Test("Sigmoid maps 0 to one half and saturates")
    func sigmoid() {
        #expect(Scores.sigmoid(0) == 0.5)
        #expect(Scores.sigmoid(100) == 1)
        #expect(Scores.sigmoid(-100) < 1e-30)
    }

    @Test("Top-k returns the highest scores first, ties to the lower index, with threshold and filter")
    func topK() {
        let scores: [Float] = [0.1, 0.5, 0.3, 0.5, 0.05, .nan, 0.9]
        #expect(Scores.topK(scores, k: 3) == [6, 1, 3])
        #expect(Scores.topK(scores, k: 10) == [6, 1, 3, 2, 0, 4])
        #expect(Scores.topK(scores, k: 10, threshold: 0.3) == [6, 1, 3, 2])
        #expect(Scores.topK(scores, k: 2, where: { $0 != 6 }) == [1, 3])
        #expect(Scores.topK(scores, k: 0) == [])
        #expect(Scores.topK([], k: 5) == [])
    }
}

/// Issue 22: a client's count (KServe's `"classification": 1e13`) reaches top-k; it costs no
/// more than the scores.
@Suite("Scores top-k bounds")
struct ScoresTopKBoundsTests {
    @Test("A negative, zero, huge or Int.max k is clamped to the scores: no allocation of k")
    func clamped() {
        let scores: [Float] = [0.2, 0.7, 0.1]
        #expect(Scores.topK(scores, k: -1) == [])
        #expect(Scores.topK(scores, k: Int.min) == [])
        #expect(Scores.topK(scores, k: 0) == [])
        #expect(Scores.topK(scores, k: 10_000_000_000_000) == [1, 0, 2])
        #expect(Scores.topK(scores, k: Int.max) == [1, 0, 2])
        #expect(Scores.topK([], k: Int.max) == [])
    }
}
