import Foundation
import NetRunnerTestSupport
import Testing

@testable import NetRunner
@testable import NetRunnerJobs

/// Resume and retry keys compare names byte for byte.
@Suite("Results keys byte for byte")
struct ExactKeyTests {
    static let composed = "photos/caf\u{E9}.jpg"
    static let decomposed = "photos/cafe\u{301}.jpg"

    @Test("ExactString tells NFC from NFD, where String does not")
    func exactString() {
        #expect(Self.composed == Self.decomposed)
        #expect(ExactString(Self.composed) != ExactString(Self.decomposed))
        #expect(Set([ExactString(Self.composed), ExactString(Self.decomposed)]).count == 2)
        #expect(ExactString(Self.composed) == ExactString("photos/caf\u{E9}.jpg"))
        // Byte order: U+0065 'e' before U+00E9 'é'.
        #expect(ExactString(Self.decomposed) < ExactString(Self.composed))
        #expect(
            ResultsLine.key(image: Self.composed, model: "m", iteration: 1)
                != ResultsLine.key(image: Self.decomposed, model: "m", iteration: 1))
    }

    @Test("A results file holding both names resumes both and retries only the failed one", arguments: [true, false])
    func resumeAndRetry(csv: Bool) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path(csv ? "results.csv" : "results.jsonl")
        let format = BulkResultsFile.Format.implied(by: path)
        do {
            let file = try BulkResultsFile(path: path, format: format, resume: true)
            let answer = ClassificationResult(
                categories: [Category(index: 967, score: 0.8, label: "espresso")], decodingMilliseconds: 1,
                preprocessingMilliseconds: 1, inferenceMilliseconds: 4)
            try file.append(ResultsLine(image: Self.composed, answer: .classification(answer)))
            try file.append(ResultsLine(image: Self.decomposed, error: "cannot decode"))
        }
        let reopened = try BulkResultsFile(path: path, format: format, resume: true)
        #expect(reopened.completedKeys == [ExactString(Self.composed), ExactString(Self.decomposed)])
        #expect(try reopened.dropFailedRecords() == 1)
        #expect(reopened.completedKeys == [ExactString(Self.composed)])
    }

    @Test("CSV cells a spreadsheet would run as formulas get a quote in front, and names still resume exactly")
    func csvFormulas() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("results.csv")
        let names = [
            "=HYPERLINK(\"http://x\",\"y\").jpg", "+1.jpg", "-2.jpg", "@SUM(A1).jpg", "'q.jpg", "\tt.jpg", "plain.jpg",
        ]
        do {
            let file = try BulkResultsFile(path: path, format: .csv, resume: true)
            for name in names { try file.append(ResultsLine(image: name, error: "=1+1 failed")) }
        }
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").dropFirst()
        #expect(lines.count == names.count)
        for line in lines.prefix(names.count - 1) {
            // Before the fix "=HYPERLINK(...)" started the line: a spreadsheet runs it.
            #expect(line.hasPrefix("'") || line.hasPrefix("\"'"), "\(line)")
            #expect(line.hasSuffix(",'=1+1 failed"), "\(line)")
        }
        #expect(lines.last?.hasPrefix("plain.jpg,") == true)
        let reopened = try BulkResultsFile(path: path, format: .csv, resume: true)
        #expect(reopened.completedKeys == Set(names.map { ExactString($0) }))
    }
}
