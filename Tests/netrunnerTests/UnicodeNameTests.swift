import Foundation
import NetRunnerTestSupport
import Testing

/// File names that differ only in their Unicode normalization are two files on Linux: `café.jpg`
/// written by a Linux program (NFC) and copied from a Mac (NFD). Swift's `String` calls them
/// equal; every place where a name is a key must not.
@Suite("Names that differ only in normalization are two images")
struct UnicodeNameTests {
    static let composed = "caf\u{E9}.jpg"  // NFC
    static let decomposed = "cafe\u{301}.jpg"  // NFD

    /// The images of a results file, as their UTF-8 bytes (a `String` comparison would merge them).
    static func images(_ path: String) throws -> [[UInt8]] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        struct Line: Decodable { var image: String }
        return try text.split(separator: "\n").map {
            Array(try JSONDecoder().decode(Line.self, from: Data($0.utf8)).image.utf8)
        }
    }

    static func photoFolder(in folder: TemporaryFolder, names: [String]) throws -> String {
        let photos = folder.path("photos")
        try FileManager.default.createDirectory(atPath: photos, withIntermediateDirectories: true)
        for name in names {
            try FileManager.default.copyItem(
                atPath: Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg"), toPath: photos + "/" + name)
        }
        return photos
    }

    @Test("bulk resumes the NFD file after the NFC one, and --retry-failed keeps them apart")
    func resume() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let photos = try Self.photoFolder(in: folder, names: [Self.composed])
        let output = folder.path("out.jsonl")
        let first = try ProcessResult.run(Fixtures.netrunner, ["bulk", photos, "--no-progress", "--output", output])
        #expect(first.status == 0, "\(first.stderr)")
        try FileManager.default.copyItem(
            atPath: Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg"), toPath: photos + "/" + Self.decomposed)
        #expect(try FileManager.default.contentsOfDirectory(atPath: photos).count == 2)
        let second = try ProcessResult.run(Fixtures.netrunner, ["bulk", photos, "--no-progress", "--output", output])
        // Before the fix: "0 of 2 images to go", and the NFD photo never ran.
        #expect(second.status == 0 && second.stderr.contains("1 of 2 images to go"), "\(second.stderr)")
        let images = try Self.images(output)
        #expect(images.count == 2)
        #expect(
            Set(images) == [Array((photos + "/" + Self.composed).utf8), Array((photos + "/" + Self.decomposed).utf8)])
    }

    @Test("bulk merge takes shards holding both names")
    func merge() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let photos = try Self.photoFolder(in: folder, names: [Self.composed, Self.decomposed, "plain.jpg"])
        for index in 0..<2 {
            let run = try ProcessResult.run(
                Fixtures.netrunner,
                [
                    "bulk", photos, "--no-progress", "--shard", "\(index)/2", "--output",
                    folder.path("shard-\(index).jsonl"),
                ])
            #expect(run.status == 0, "\(run.stderr)")
        }
        let merged = folder.path("merged.jsonl")
        let merge = try ProcessResult.run(
            Fixtures.netrunner,
            ["bulk", "merge", folder.path("shard-0.jsonl"), folder.path("shard-1.jsonl"), "--output", merged])
        // Before the fix: "… is also in shard-0.jsonl" when both names were in the shards.
        #expect(merge.status == 0, "\(merge.stderr)")
        #expect(Set(try Self.images(merged)).count == 3)
    }
}
