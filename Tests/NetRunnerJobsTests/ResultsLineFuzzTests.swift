import Foundation
import NetRunnerTestSupport
import Testing

@testable import NetRunnerJobs

/// Issue 54, finding 10, fuzzed: hostile results lines against the fast reader.
///
/// The lines have nested and repeated `image` and
/// `float_embedding` keys, numbers JSON refuses (`0x1p3`, `+1`, `.5`, `007`), escapes, JSON's
/// punctuation planted, bytes flipped and lines cut. For each, the fast reader
/// (`BulkResultsFile.forEachEmbedding`) answers what Foundation's decoder of whole lines answers
/// (the same image and floats, bit for bit, or the same refusal), and a line ``EmbeddingLineScan``
/// reads itself holds the embedding the decoder reads; any other line falls back to the decoder.
///
/// The corpus is seeded: `#index` names the same line every run.
@Suite("Fuzzing the results-line reader")
struct ResultsLineFuzzTests {
    static let insertions = [
        #""image":"evil.jpg","#, #""float_embedding":[9,9,9,9],"#, #""a":{"image":"nested.jpg"},"#,
        #""a":{"float_embedding":[7]},"#, #""inference_results":{"embedding":{"float_embedding":[8]}},"#,
        #""embedding":{"float_embedding":[6]},"#, #""float\u005fembedding":[5],"#, #""im\u0061ge":"esc.jpg","#,
        "0x1p3", "+1", ".5", "007", "1e999", "-", "NaN", "\"", "\\", "{", "}", "[", "]", ",", ":", " ", "\u{00E9}",
        "null", "true", "\t",
    ]

    /// One of `values`, chosen by `random`.
    static func pick(_ values: [String], using random: inout SeededGenerator) -> String {
        values[Int.random(in: 0..<values.count, using: &random)]
    }

    static let mutations = ["insert", "replace a number", "flip a bit", "delete", "cut", "repeat a slice"]

    /// Mutates `line`; returns the mutation's index in ``mutations``.
    static func mutate(_ line: inout [UInt8], using random: inout SeededGenerator) -> Int {
        let kind = Int.random(in: 0..<mutations.count, using: &random)
        let at = Int.random(in: 0..<line.count, using: &random)
        switch kind {
        case 0:
            line.insert(contentsOf: Array(Self.pick(insertions, using: &random).utf8), at: at)
        case 1:
            // A number of the line (a digit's run) replaced by one JSON refuses or by an extreme.
            let digits = line.indices.filter { (0x30...0x39).contains(line[$0]) }
            guard let start = digits.randomElement(using: &random) else { break }
            var end = start
            while end < line.count, (0x30...0x39).contains(line[end]) || line[end] == 0x2E { end += 1 }
            let numbers = ["0x1p3", "+1", ".5", "007", "1.", "1e", "3.4028236e38", "1e-50", "-0", "1E+2", "00"]
            line.replaceSubrange(start..<end, with: Array(Self.pick(numbers, using: &random).utf8))
        case 2:
            line[at] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
        case 3:
            line.removeSubrange(at..<min(line.count, at + Int.random(in: 1...8, using: &random)))
        case 4:
            line = Array(line.prefix(at))
        default:
            let end = min(line.count, at + Int.random(in: 1...40, using: &random))
            line.insert(contentsOf: line[at..<end], at: end)
        }
        return kind
    }

    @Test("500 mutated results lines: the fast reader answers as the decoder, or leaves the line to it")
    func mutatedLines() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-line-fuzz")
        defer { folder.remove() }
        let originals = [
            EmbeddingLinesTests.hostile(),
            EmbeddingLinesTests.hostile(extra: #""a":{"image":"evil-1.jpg"},"#),
            EmbeddingLinesTests.hostile(embedding: #""quantized_embedding":[64,-32,0,127],"#),
            EmbeddingLinesTests.hostile(floats: " 0.5 ,\t-0.25 , 1e-45 "),
            EmbeddingLinesTests.hostile(image: #""image":"say \"cheese\".jpg""#),
        ]
        var random = SeededGenerator(seed: 0x4C49_4E45)
        var outcomes: [String: Int] = [:]
        var kinds = [Int](repeating: 0, count: Self.mutations.count)
        let count = 500
        for index in 0..<count {
            var bytes = Array(originals[Int.random(in: 0..<originals.count, using: &random)].utf8)
            for _ in 0..<Int.random(in: 1...3, using: &random) where !bytes.isEmpty {
                kinds[Self.mutate(&bytes, using: &random)] += 1
            }
            // One line: a newline planted by a mutation would make two.
            bytes.removeAll { $0 == 0x0A }
            guard !bytes.isEmpty else { continue }
            let line = String(decoding: bytes, as: UTF8.self)
            let (fast, decoded) = try EmbeddingLinesTests.outcomes(line, in: folder, "line")
            #expect(fast == decoded, "#\(index): \(line)")
            let scan = Array(line.utf8).withUnsafeBufferPointer { EmbeddingLineScan($0) }
            if let scan {
                // Read by the fast path: the decoder reads these floats too.
                let bits = scan.values.map(\.bitPattern)
                // (A failed image's line is skipped either way.)
                #expect(
                    !decoded.contains(": [") || decoded.hasSuffix(": \(bits)"),
                    "#\(index): \(line) read \(scan.values); decoder: \(decoded)")
                outcomes["read by the fast path", default: 0] += 1
            } else {
                outcomes[decoded == "refused" ? "refused by both" : "left to the decoder", default: 0] += 1
            }
        }
        let summary = outcomes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        let mutated = zip(Self.mutations, kinds).map { "\($0) \($1)" }.joined(separator: ", ")
        print("Results-line fuzz: \(count) lines (\(mutated)): \(summary)")
        #expect(kinds.allSatisfy { $0 > 0 })
        #expect(outcomes["read by the fast path", default: 0] >= count / 20, "\(summary)")
        #expect(outcomes["refused by both", default: 0] >= count / 20, "\(summary)")
    }
}
