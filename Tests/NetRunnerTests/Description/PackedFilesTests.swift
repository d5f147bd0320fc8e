import Foundation
import NetRunnerTestSupport
import Testing

@testable import NetRunner

/// The stored zip that metadata writers append to models.
@Suite("Files packed into models")
struct PackedFilesTests {
    /// A stored (uncompressed) zip archive holding `files`, as the metadata writers make it.
    static func zip(
        _ files: [(String, Data)], method: UInt16 = 0, attributes: Int = 0o100644 << 16, corruptCRC: Bool = false
    ) -> Data {
        func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
        func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(value >> (8 * $0) & 0xFF) } }
        var archive: [UInt8] = []
        var directory: [UInt8] = []
        for (name, data) in files {
            let offset = archive.count
            let nameBytes = Array(name.utf8)
            let crc = Int(crc32(data)) ^ (corruptCRC ? 1 : 0)
            archive += le32(0x0403_4B50) + le16(20) + le16(0) + le16(Int(method)) + le16(0) + le16(0) + le32(crc)
            archive += le32(data.count) + le32(data.count) + le16(nameBytes.count) + le16(0) + nameBytes + [UInt8](data)
            directory += le32(0x0201_4B50) + le16(20) + le16(20) + le16(0) + le16(Int(method)) + le16(0) + le16(0)
            directory += le32(crc) + le32(data.count) + le32(data.count) + le16(nameBytes.count) + le16(0) + le16(0)
            directory += le16(0) + le16(0) + le32(attributes) + le32(offset) + nameBytes
        }
        let directoryOffset = archive.count
        archive += directory
        archive += le32(0x0605_4B50) + le16(0) + le16(0) + le16(files.count) + le16(files.count)
        archive += le32(directory.count) + le32(directoryOffset) + le16(0)
        return Data(archive)
    }

    /// The zip CRC-32 (reflected polynomial 0xEDB88320), computed bit by bit: independent of zlib.
    static func crc32(_ data: Data) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    static let model = Data(repeating: 7, count: 4096)

    @Test("A packed file whose bytes do not match its CRC-32 is refused, naming the file")
    func checksum() {
        #expect(Self.crc32(Data("123456789".utf8)) == 0xCBF4_3926)  // the standard check value
        let damaged = Self.model + Self.zip([("labels.txt", Data("cat\ndog\n".utf8))], corruptCRC: true)
        #expect {
            try PackedFiles(model: damaged, source: "m.tflite")
        } throws: { error in
            "\(error)".contains("labels.txt is corrupt: its CRC-32 is")
        }
    }

    @Test("Labels appended to a model are read back by name")
    func labels() throws {
        let packed = try PackedFiles(
            model: Self.model + Self.zip([("labels.txt", Data("cat\ndog\n".utf8)), ("readme.txt", Data("hi".utf8))]),
            source: "m.tflite")
        #expect(packed.files["labels.txt"] == Data("cat\ndog\n".utf8))
        #expect(packed.files["readme.txt"] == Data("hi".utf8))
        #expect(try PackedFiles(model: Self.model, source: "m.tflite").files.isEmpty)
    }

    @Test("Entries outside the archive, compressed entries and damaged archives are refused")
    func hostile() {
        let escape = Self.model + Self.zip([("../labels.txt", Data("x".utf8))])
        #expect(throws: ModelBundleError.self) { try PackedFiles(model: escape, source: "m.tflite") }
        let compressed = Self.model + Self.zip([("labels.txt", Data("x".utf8))], method: 8)
        #expect(throws: ModelBundleError.self) { try PackedFiles(model: compressed, source: "m.tflite") }
        let archive = Self.zip([("labels.txt", Data("cat\ndog\n".utf8))])
        // The end record survives, the entry it points to does not.
        let damaged = Self.model + Data(repeating: 0, count: 40) + archive.suffix(archive.count - 40)
        #expect(throws: ModelBundleError.self) { try PackedFiles(model: damaged, source: "m.tflite") }
    }

    @Test("Thousands of corrupted archives are read or refused, never crash")
    func fuzz() {
        let original = [UInt8](Self.model + Self.zip([("labels.txt", Data(repeating: 65, count: 300))]))
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
