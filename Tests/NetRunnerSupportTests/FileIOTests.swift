import Foundation
import NetRunnerSupport
import NetRunnerTestSupport
import Testing

/// Whole-file reads and atomic writes: their own `FileError`, naming the path and the reason.
@Suite("Whole-file I/O")
struct FileIOTests {
    @Test("A written file reads back; a missing file, a folder and a missing folder are FileErrors")
    func roundTripAndErrors() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("a.txt")
        try FileIO.writeAtomically(Data("hello\n".utf8), to: path)
        #expect(try FileIO.contents(of: path) == Data("hello\n".utf8))
        let missing = folder.path("missing.txt")
        #expect(throws: FileError.unreadable(path: missing, reason: "No such file or directory")) {
            try FileIO.contents(of: missing)
        }
        #expect(throws: FileError.unreadable(path: folder.url.path, reason: "not a regular file (a folder)")) {
            try FileIO.contents(of: folder.url.path)
        }
        let nowhere = folder.path("no/such/folder/report.html")
        #expect(throws: FileError.writeFailed(path: nowhere, reason: "No such file or directory")) {
            try FileIO.writeAtomically(Data(), to: nowhere)
        }
        #expect(
            "\(FileError.unreadable(path: missing, reason: "No such file or directory"))"
                == "Cannot read \(missing): No such file or directory. Check that the file exists and is readable.")
        #expect(
            FileError.writeFailed(path: "r.html", reason: "No space left on device").description
                == "Cannot write r.html: No space left on device. Nothing was written; check the folder exists and has room."
        )
    }

    @Test("Numbers print with a fixed count of decimals; durations convert to milliseconds")
    func formatting() {
        #expect(fixedDecimals(12.3, 2) == "12.30")
        #expect(fixedDecimals(2.0 / 3.0, 3) == "0.667")
        #expect(fixedDecimals(7.6, 0) == "8")
        #expect(fixedDecimals(.infinity, 2) == "inf")
        #expect(Duration.microseconds(1500).inMilliseconds == 1.5)
        #expect(Duration.seconds(2).inMilliseconds == 2000)
    }
}
