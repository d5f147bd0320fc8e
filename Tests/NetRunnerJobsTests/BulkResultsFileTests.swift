import Foundation
import NetRunnerTestSupport
import Testing

@testable import NetRunner
@testable import NetRunnerJobs

/// The results file: lines that round-trip, a resumed file that only ever holds whole lines, a
/// file of something else refused.
@Suite("Bulk results file")
struct BulkResultsFileTests {
    static let photos = [
        "Tests/Fixtures/Photos/test/chelsea.png", "Tests/Fixtures/Photos/test/grace_hopper.jpg",
    ].map(Fixtures.path)
    static let uint8Bundle = Fixtures.path("Models/bundles/mobilenet_v2_1.0_224_uint8.tiobundle")
    static let faceBundle = Fixtures.path("Models/bundles/face_detection_short_range.tiobundle")

    @Test("Records survive a JSON Lines round trip: answers, detections, errors")
    func recordRoundTrip() throws {
        let classifier = try ImageTask(modelAt: Self.uint8Bundle)
        let detector = try ImageTask(modelAt: Self.faceBundle)
        let records = [
            ResultsLine(image: "a.jpg", answer: try classifier.run(fileAt: Self.photos[0])),
            ResultsLine(image: "b.jpg", model: "face", iteration: 2, answer: try detector.run(fileAt: Self.photos[1])),
            ResultsLine(image: "c, \"quoted\".jpg", error: "c.jpg is truncated"),
        ]
        for record in records {
            let line = BulkResultsFile.Format.jsonLines.line(for: record)
            #expect(line.hasSuffix("\n") && line.filter { $0 == "\n" }.count == 1)
            let decoded = try JSONDecoder().decode(ResultsLine.self, from: Data(line.utf8))
            #expect(decoded.image == record.image && decoded.model == record.model)
            #expect(decoded.iteration == record.iteration && decoded.error == record.error)
            switch (decoded.answer, record.answer) {
            case (.classification(let a)?, .classification(let b)?):
                #expect(a.categories == b.categories)
                #expect(abs(a.inferenceMilliseconds - b.inferenceMilliseconds) < 0.001)
            case (.detection(let a)?, .detection(let b)?):
                #expect(a.detections.count == b.detections.count)
                for (x, y) in zip(a.detections, b.detections) {
                    #expect(abs(x.boundingBox.minX - y.boundingBox.minX) < 0.001)
                    #expect(abs(x.boundingBox.maxY - y.boundingBox.maxY) < 0.001)
                    #expect(x.categories.first?.score == y.categories.first?.score)
                }
            case (nil, nil): break
            default: Issue.record("the answer changed kind: \(String(describing: decoded.answer))")
            }
            let csv = BulkResultsFile.Format.csv.line(for: record)
            #expect(csv.filter { $0 == "\n" }.count == 1)
            #expect(BulkResultsFile.firstCSVField(String(csv.dropLast())) == record.image)
        }
    }

    @Test("Reopening a results file cuts off an unfinished last line and lists what is done", arguments: [true, false])
    func resume(csv: Bool) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path(csv ? "results.csv" : "results.jsonl")
        let format = BulkResultsFile.Format.implied(by: path)
        #expect(format == (csv ? .csv : .jsonLines))
        do {
            let file = try BulkResultsFile(path: path, format: format, resume: true)
            #expect(file.completedKeys.isEmpty && !file.repairedPartialLine)
            for name in ["a.jpg", "b,1.jpg"] {
                try file.append(ResultsLine(image: name, error: "\(name) failed, badly"))
            }
            let answer = ClassificationResult(
                categories: [Category(index: 967, score: 0.8, label: "espresso")], decodingMilliseconds: 1,
                preprocessingMilliseconds: 1, inferenceMilliseconds: 4)
            try file.append(ResultsLine(image: "c.jpg", answer: .classification(answer)))
        }
        // A run killed in the middle of a line.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data((csv ? "d.jpg,zzpartial" : "{\"image\":\"d.jpg\",\"zzpartial").utf8))
        try handle.close()
        do {  // one writer at a time: the file is locked while open
            let reopened = try BulkResultsFile(path: path, format: format, resume: true)
            #expect(reopened.completedKeys == ["a.jpg", "b,1.jpg", "c.jpg"])
            #expect(reopened.resumedCount == 3 && reopened.repairedPartialLine)
            #expect(reopened.resumedFailures == 2)
            try reopened.append(ResultsLine(image: "d.jpg", error: "d.jpg failed"))
            let text = try String(contentsOfFile: path, encoding: .utf8)
            #expect(text.hasSuffix("\n"))
            #expect(text.split(separator: "\n").count == (csv ? 5 : 4))
            #expect(!text.contains("zzpartial"))
            if !csv {
                #expect(try BulkResultsFile.records(in: path).map(\.image) == ["a.jpg", "b,1.jpg", "c.jpg", "d.jpg"])
            }
        }
        // Starting afresh empties it.
        let fresh = try BulkResultsFile(path: path, format: format, resume: false)
        #expect(fresh.completedKeys.isEmpty)
        let after = try String(contentsOfFile: path, encoding: .utf8)
        #expect(after == (csv ? BulkResultsFile.csvColumns.joined(separator: ",") + "\n" : ""))
    }

    @Test("A file that is not results is refused, naming the file and the line")
    func foreignFile() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let notes = try folder.write(Data("my notes\n".utf8), named: "notes.jsonl")
        #expect {
            try BulkResultsFile(path: notes, format: .jsonLines, resume: true)
        } throws: { error in
            "\(error)".contains(notes) && "\(error)".contains("line 1")
        }
        let table = try folder.write(Data("a,b,c\n1,2,3\n".utf8), named: "table.csv")
        #expect {
            try BulkResultsFile(path: table, format: .csv, resume: true)
        } throws: { error in
            "\(error)".contains(table) && "\(error)".contains("header")
        }
        #expect(try String(contentsOfFile: notes, encoding: .utf8) == "my notes\n", "a refused file is left as it was")
        #expect(throws: BulkError.self) {
            try BulkResultsFile(path: folder.path("missing/out.jsonl"), format: .jsonLines, resume: true)
        }
    }
}
