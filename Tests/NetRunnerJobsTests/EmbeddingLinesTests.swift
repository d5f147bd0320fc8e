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
            if index == 2 { embedding[3] = .leastNonzeroMagnitude }
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

    /// What a file of one line answers: the fast reader's and the decoder's, each as text.
    static func outcomes(_ line: String, in folder: TemporaryFolder, _ name: String) throws -> (
        fast: String, decoded: String
    ) {
        let path = folder.path("\(name).jsonl")
        try Data((line + "\n").utf8).write(to: URL(fileURLWithPath: path))
        func text(_ embeddings: [(String, [Float])], skipped: Int) -> String {
            "\(skipped) skipped; " + embeddings.map { "\($0.0): \($0.1.map(\.bitPattern))" }.joined(separator: "; ")
        }
        var fast = "refused"
        var read: [(String, [Float])] = []
        if let skipped = try? BulkResultsFile.forEachEmbedding(in: path, { read.append(($0, $1)) }) {
            fast = text(read, skipped: skipped)
        }
        var decoded = "refused"
        if let records = try? BulkResultsFile.records(in: path), let embeddings = try? Self.decoded(path) {
            decoded = text(embeddings, skipped: records.count - embeddings.count)
        }
        return (fast, decoded)
    }

    /// A results line of an embedding of 4 values, with `extra` fields first and each part as given.
    static func hostile(
        extra: String = "", image: String = #""image":"real.jpg""#, error: String = "false",
        floats: String = "0.5,-0.25,3e-3,1", embedding: String = "", results: String = "", tail: String = ""
    ) -> String {
        #"{"# + extra + #""decode_latency":1,"error":"# + error + "," + image
            + #","image_height":3,"image_width":4,"inference_latency":1,"inference_results":{"# + results
            + #""embedding":{"# + embedding + #""float_embedding":["# + floats
            + #"],"head_index":0,"head_name":"x"}},"preprocessor_latency":1}"# + tail
    }

    @Test("Hostile lines: nested or repeated keys and numbers JSON refuses read as the decoder reads them")
    func hostileLines() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-hostile-lines")
        defer { folder.remove() }
        let lines: [(String, String)] = [
            ("plain", Self.hostile()),
            ("nested image", Self.hostile(extra: #""a":{"image":"evil-1.jpg"},"#)),
            ("nested vector", Self.hostile(extra: #""a":{"float_embedding":[9,9,9,9]},"#)),
            ("image in a string", Self.hostile(extra: #""a":"\"image\":\"evil.jpg\", [","#)),
            ("repeated image", Self.hostile(image: #""image":"evil.jpg","image":"real.jpg""#)),
            ("repeated vector", Self.hostile(embedding: #""float_embedding":[9,9,9,9],"#)),
            ("escaped key", Self.hostile(embedding: #""float_embedding":[9,9,9,9],"#)),
            ("repeated embedding", Self.hostile(results: #""embedding":{"float_embedding":[9]},"#)),
            ("another task too", Self.hostile(results: #""classification":{"categories":[]},"#)),
            ("quantized", Self.hostile(embedding: #""quantized_embedding":[64,-32,0,127],"#)),
            ("quantized too large", Self.hostile(embedding: #""quantized_embedding":[300,0,0,0],"#)),
            ("failed", Self.hostile(error: "true")),
            ("no size", Self.hostile().replacingOccurrences(of: #""image_width":4,"#, with: "")),
            ("after the object", Self.hostile(tail: " x")),
            ("carriage return", Self.hostile(tail: "\r")),
            ("spaces", Self.hostile(floats: " 0.5 ,\t-0.25 , 1 ")),
            ("empty", Self.hostile(floats: "")),
            ("cut", String(Self.hostile().prefix(150))),
        ]
        let numbers = [
            "0x1p3", "+1", ".5", "007", "1.", "1e", "-", "--1", "1e+", "Infinity", "NaN", "nan", "inf", "1e39",
            "3.4028236e38", "1e-50", "-0", "0", "1E+2", "1e-45", "1.17549435e-38", "3.4028235e38",
            "0.1000000000000000055511151231257827021181583404541015625", "0.30000001192092896", "1_0", "1,",
        ]
        let cases = lines + numbers.map { ("number \($0)", Self.hostile(floats: "0.5,\($0),1")) }
        for (name, line) in cases {
            let (fast, decoded) = try Self.outcomes(line, in: folder, name.replacingOccurrences(of: " ", with: "-"))
            #expect(fast == decoded, "\(name): \(line)")
        }
        // The nested image and vector are not the line's: the real ones are read, by the fast path.
        for line in [lines[1].1, lines[2].1, lines[3].1] {
            let scan = Array(line.utf8).withUnsafeBufferPointer { EmbeddingLineScan($0) }
            #expect(scan?.values == [0.5, -0.25, 3e-3, 1], "\(line)")
            #expect(try Self.outcomes(line, in: folder, "nested").fast.hasPrefix("0 skipped; real.jpg: "))
        }
        // Numbers JSON refuses, and repeated or escaped keys of the path, are not the fast path's.
        for line in [lines[5].1, lines[6].1, lines[7].1] + numbers.prefix(11).map({ Self.hostile(floats: $0) }) {
            #expect(Array(line.utf8).withUnsafeBufferPointer { EmbeddingLineScan($0) } == nil, "\(line)")
        }
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
