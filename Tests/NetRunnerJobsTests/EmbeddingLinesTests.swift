import Foundation
import NetRunner
import NetRunnerImage
import NetRunnerSupport
import NetRunnerTestSupport
import Testing

@testable import NetRunnerJobs

/// `similar index`'s reader of embeddings in a results file, against Foundation's decoder of
/// whole lines (`BulkResultsFile.records(in:)`): the same images and the same floats, bit for
/// bit, whichever way each line is read.
@Suite("Embeddings read from JSON Lines")
struct EmbeddingLinesTests {
    /// The embeddings as the whole-line decoder reads them.
    static func decoded(_ path: String) throws -> [(String, [Float])] {
        try BulkResultsFile.records(in: path).compactMap { record in
            guard case .other(let answer as EmbeddingResult)? = record.answer else { return nil }
            return (record.image, answer.embedding)
        }
    }

    @Test("Every kind of line reads as the decoder reads it; a broken line is an error naming it")
    func sameAsDecoder() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-embedding-lines")
        defer { folder.remove() }
        var generator = SplitMix64(seed: 7)
        func values(_ count: Int) -> [Float] {
            (0..<count).map { _ in Float(Int64(generator.next() % 2_000_001) - 1_000_000) / 7_777.7 }
        }
        let size = PixelSize(width: 4, height: 3)
        var lines: [String] = []
        // Bulk's own lines, the fast path: plain, Unicode and a tiny value that strtof flags.
        for (index, image) in ["a.jpg", "café/über.png", "tiny.jpg"].enumerated() {
            var embedding = values(64)
            if index == 2 { embedding[3] = 1e-45 }
            let answer = EmbeddingResult(embedding: embedding, imageSize: size).imageAnswer
            lines.append(BulkResultsFile.Format.jsonLines.line(for: ResultsLine(image: image, answer: answer)))
        }
        // Escapes in the name, a failed image and another task's answer: the decoder's.
        let escaped = EmbeddingResult(embedding: values(64), imageSize: size).imageAnswer
        lines.append(
            BulkResultsFile.Format.jsonLines.line(for: ResultsLine(image: "say \"cheese\"\n.jpg", answer: escaped)))
        lines.append(BulkResultsFile.Format.jsonLines.line(for: ResultsLine(image: "bad.jpg", error: "unreadable")))
        let category = Category(index: 1, score: 0.5, label: "cat")
        let classified = ClassificationResult(
            categories: [category], decodingMilliseconds: 1, preprocessingMilliseconds: 1, inferenceMilliseconds: 1)
        lines.append(
            BulkResultsFile.Format.jsonLines.line(for: ResultsLine(image: "c.jpg", answer: .classification(classified)))
        )
        // Python's json.dumps spacing.
        lines.append(
            #"{"image": "py.jpg", "error": false, "image_width": 4, "image_height": 3, "decode_latency": 1, "preprocessor_latency": 1, "inference_latency": 1, "inference_results": {"embedding": {"head_index": 0, "head_name": "x", "float_embedding": [0.5, -0.25, 3e-3]}}}"#
                + "\n")
        let path = folder.path("results.jsonl")
        try Data(lines.joined().utf8).write(to: URL(fileURLWithPath: path))

        var read: [(String, [Float])] = []
        let skipped = try BulkResultsFile.forEachEmbedding(in: path) { read.append(($0, $1)) }
        let expected = try Self.decoded(path)
        #expect(skipped == 2)
        #expect(read.map(\.0) == expected.map(\.0))
        #expect(read.map(\.0) == ["a.jpg", "café/über.png", "tiny.jpg", "say \"cheese\"\n.jpg", "py.jpg"])
        for ((image, ours), (_, theirs)) in zip(read, expected) {
            #expect(ours.map(\.bitPattern) == theirs.map(\.bitPattern), "\(image)")
        }

        // A line cut in the middle of its numbers is not a results line.
        let cut = folder.path("cut.jsonl")
        let first = lines[0]
        try Data((String(first.prefix(first.count / 2)) + "\n").utf8).write(to: URL(fileURLWithPath: cut))
        #expect(throws: BulkError.self) { try BulkResultsFile.forEachEmbedding(in: cut) { _, _ in } }
    }

    @Test("Lines are split in batches: 70,000 lines read in order, CSV quotes kept, the cut last line left")
    func manyLines() throws {
        let text = (0..<70_000).map { "line \($0)\n" }.joined() + "cut"
        var seen = 0
        let length = try BulkResultsFile.forEachWholeLine(Data(text.utf8)) { (line, number) throws(BulkError) in
            if String(decoding: line, as: UTF8.self) == "line \(number - 1)" { seen += 1 }
        }
        #expect(seen == 70_000 && length == text.utf8.count - 3)
        let csv = "a,\"two\nlines\"\n\nb,c\n\"open"
        var records: [String] = []
        var numbers: [Int] = []
        let csvLength = try BulkResultsFile.forEachWholeLine(Data(csv.utf8), quoted: true) {
            (line, number) throws(BulkError) in
            records.append(String(decoding: line, as: UTF8.self))
            numbers.append(number)
        }
        #expect(records == ["a,\"two\nlines\"", "b,c"] && numbers == [1, 3] && csvLength == csv.utf8.count - 5)
    }
}
