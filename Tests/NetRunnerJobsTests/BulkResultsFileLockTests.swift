import Foundation
import NetRunner
import NetRunnerTestSupport
import Testing

@testable import NetRunnerJobs

#if canImport(Glibc)
    import Glibc
#endif

/// A results file has one writer at a time, and is a regular file (bulk's and evaluate's
/// `results.jsonl` alike).
@Suite("Bulk results file: one writer, regular files only")
struct BulkResultsFileLockTests {
    @Test("A second writer is refused at once, whether it resumes or restarts, until the first closes")
    func exclusiveLock() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        for format in BulkResultsFile.Format.allCases {
            let path = folder.path("results." + format.rawValue)
            var first: BulkResultsFile? = try BulkResultsFile(path: path, format: format, resume: true)
            try first?.append(ResultsLine(image: "a.jpg", error: "broken"))
            for resume in [true, false] {
                #expect(
                    throws: BulkError.unreadableResults(
                        file: path,
                        reason: "another run is writing it (wait for that run to end, or choose another file)")
                ) {
                    _ = try BulkResultsFile(path: path, format: format, resume: resume)
                }
            }
            #expect(first?.completedKeys.isEmpty == true)
            first = nil
            let second = try BulkResultsFile(path: path, format: format, resume: true)
            #expect(second.resumedCount == 1, "the refused restart cut nothing")
        }
    }

    @Test("A named pipe is refused without blocking, resuming or not")
    func namedPipe() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("results.jsonl")
        #expect(mkfifo(path, 0o644) == 0)
        for resume in [true, false] {
            #expect(throws: BulkError.self) {
                _ = try BulkResultsFile(path: path, format: .jsonLines, resume: resume)
            }
        }
    }
}
