import Foundation
import Testing

@testable import NetRunnerSupport

/// The one file writer that hashes as it writes (issue 24: downloads, resumed downloads and
/// hub uploads each had their own loop).
@Suite("Hashing file writer")
struct HashingFileWriterTests {
    static func folder() throws -> String {
        let path = NSTemporaryDirectory() + "netrunner-hashing-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test("Written in pieces: the file's bytes and their SHA-256; an existing file is refused")
    func create() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let bytes = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let path = folder + "/file"
        let writer = try HashingFileWriter(creating: path)
        for start in stride(from: 0, to: bytes.count, by: 65_536) {
            try bytes[start..<min(bytes.count, start + 65_536)].withUnsafeBytes { try writer.write($0) }
        }
        #expect(writer.byteCount == bytes.count)
        #expect(try writer.finish() == SHA256.hexDigest(of: bytes))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        #expect(throws: FileError.self) { try HashingFileWriter(creating: path) }
    }

    @Test("Unfinished, the file is removed; resumed, the digest covers the kept bytes and the new ones")
    func discardAndResume() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/partial"
        do {
            let writer = try HashingFileWriter(creating: path)
            try Data("abandoned".utf8).withUnsafeBytes { try writer.write($0) }
        }
        #expect(!FileManager.default.fileExists(atPath: path))
        do {
            let writer = try HashingFileWriter(resuming: path, keeping: 0)
            try Data("first half, ".utf8).withUnsafeBytes { try writer.write($0) }
            writer.keepPartial()
        }
        let resumed = try HashingFileWriter(resuming: path, keeping: 12)
        try Data("second half".utf8).withUnsafeBytes { try resumed.write($0) }
        #expect(resumed.byteCount == 23)
        #expect(try resumed.finish() == SHA256.hexDigest(of: Data("first half, second half".utf8)))
    }
}
