public import Foundation

/// Zip archives built byte by byte for tests (stored entries, any names and attributes, a
/// CRC-32 computed independently of zlib), so hostile archives can be made at will.
///
///     let data = ZipFixture.zip([("x.tiobundle/model.json", json), ("../evil.txt", json)])
public enum ZipFixture {
    /// An archive of `files`, each stored (`method` 0) unless told otherwise.
    ///
    /// - Parameters:
    ///   - files: Names and bytes.
    ///   - method: The compression method written (0: stored).
    ///   - attributes: The external attributes (a mode in the high 16 bits).
    ///   - corruptCRC: Whether to write wrong CRC-32s.
    /// - Returns: The archive's bytes.
    public static func zip(
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

    /// The zip CRC-32 (reflected polynomial 0xEDB88320), a byte at a time from a table made here
    /// bit by bit: independent of zlib.
    public static func crc32(_ data: Data) -> UInt32 {
        data.withUnsafeBytes { bytes in
            crcTable.withUnsafeBufferPointer { table in
                var crc: UInt32 = 0xFFFF_FFFF
                for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
                return ~crc
            }
        }
    }

    /// The CRC of each byte value, shifted in bit by bit.
    private static let crcTable: [UInt32] = (0..<256).map { (value: UInt32) in
        var crc = value
        for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        return crc
    }

    /// Writes the float32 MobileNetV2 bundle of the repository, zipped as `float.tiobundle/`
    /// (13 MB: long enough to interrupt a download), to `path`.
    ///
    /// - Parameters:
    ///   - path: The zip file to write.
    ///   - padding: Bytes of seeded random data added as `assets/padding.bin` (a download longer
    ///     than what the kernel's socket buffers hold, so cutting it is seen).
    public static func writeFloatBundle(to path: String, padding: Int = 0) throws {
        let bundle = "Models/bundles/mobilenet_v2_1.0_224_float32.tiobundle/"
        var generator = SeededGenerator(seed: 20_261_123)
        var extra: [(String, Data)] = []
        if padding > 0 {
            var bytes = Data(count: padding)
            bytes.withUnsafeMutableBytes { raw in
                for offset in stride(from: 0, to: padding - 7, by: 8) {
                    raw.storeBytes(of: generator.next(), toByteOffset: offset, as: UInt64.self)
                }
            }
            extra.append(("float.tiobundle/assets/padding.bin", bytes))
        }
        try zip(
            extra + [
                ("float.tiobundle/model.json", try Fixtures.data(bundle + "model.json")),
                (
                    "float.tiobundle/mobilenet_v2_1.0_224_float32.tflite",
                    try Fixtures.data(bundle + "mobilenet_v2_1.0_224_float32.tflite")
                ),
                ("float.tiobundle/assets/labels.txt", try Fixtures.data(bundle + "assets/labels.txt")),
            ]
        ).write(to: URL(fileURLWithPath: path))
    }
}
