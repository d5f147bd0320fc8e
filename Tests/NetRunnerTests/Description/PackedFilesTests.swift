import Foundation
import NetRunnerTestSupport
import Testing

@testable import NetRunner

/// The stored zip that metadata writers append to models.
@Suite("Files packed into models")
struct PackedFilesTests {
    /// A stored (uncompressed) zip archive holding `files`, as the metadata writers make it.
    static let model = Data(repeating: 7, count: 4096)

    @Test("A packed file whose bytes do not match its CRC-32 is refused, naming the file")
    func checksum() {
        #expect(ZipFixture.crc32(Data("123456789".utf8)) == 0xCBF4_3926)  // the standard check value
        let damaged = Self.model + ZipFixture.zip([("labels.txt", Data("cat\ndog\n".utf8))], corruptCRC: true)
        #expect {
            try PackedFiles(model: damaged, source: "m.tflite")
        } throws: { error in
            "\(error)".contains("labels.txt is corrupt: its CRC-32 is")
        }
    }

    @Test("Labels appended to a model are read back by name")
    func labels() throws {
        let packed = try PackedFiles(
            model: Self.model
                + ZipFixture.zip([("labels.txt", Data("cat\ndog\n".utf8)), ("readme.txt", Data("hi".utf8))]),
            source: "m.tflite")
        #expect(packed.files["labels.txt"] == Data("cat\ndog\n".utf8))
        #expect(packed.files["readme.txt"] == Data("hi".utf8))
        #expect(try PackedFiles(model: Self.model, source: "m.tflite").files.isEmpty)
    }

    @Test("Entries outside the archive, compressed entries and damaged archives are refused")
    func hostile() {
        let escape = Self.model + ZipFixture.zip([("../labels.txt", Data("x".utf8))])
        #expect(throws: ModelBundleError.self) { try PackedFiles(model: escape, source: "m.tflite") }
        let compressed = Self.model + ZipFixture.zip([("labels.txt", Data("x".utf8))], method: 8)
        #expect(throws: ModelBundleError.self) { try PackedFiles(model: compressed, source: "m.tflite") }
        let archive = ZipFixture.zip([("labels.txt", Data("cat\ndog\n".utf8))])
        // The end record survives, the entry it points to does not.
        let damaged = Self.model + Data(repeating: 0, count: 40) + archive.suffix(archive.count - 40)
        #expect(throws: ModelBundleError.self) { try PackedFiles(model: damaged, source: "m.tflite") }
    }

    @Test("Thousands of corrupted archives are read or refused, never crash")
    func fuzz() {
        let original = [UInt8](Self.model + ZipFixture.zip([("labels.txt", Data(repeating: 65, count: 300))]))
        var generator = SeededGenerator(seed: 0x7A69_7066)
        for _ in 0..<2000 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                let position = Int.random(in: (original.count - 400)..<bytes.count, using: &generator)
                bytes[position] = UInt8.random(in: 0...255, using: &generator)
            }
            _ = try? PackedFiles(model: Data(bytes), source: "fuzz")
        }
    }
}
