public import FoundationEssentials

/// The files the TFLite metadata writers pack into a model: an uncompressed (stored) zip
/// archive appended to the `.tflite` flatbuffer, whose central directory ends the file.
///
/// Only what the writers produce is read: stored entries, no encryption, no ZIP64. Every
/// offset and size is checked against the file, entry names with `/` or `..` are refused,
/// and entries are capped in count and size, so a hostile archive cannot read out of bounds
/// or make the reader allocate without limit.
public struct PackedFiles: Equatable, Sendable {
    /// The files by name.
    public let files: [String: Data]

    /// The most entries read, and the largest entry, in bytes.
    public static let maximumEntries = 256
    /// The largest entry accepted, in bytes.
    public static let maximumEntrySize = 16 << 20

    /// Reads the archive at the end of `model` (the whole `.tflite` file's bytes); an empty
    /// set of files when there is none.
    ///
    /// - Parameters:
    ///   - model: The model file's bytes.
    ///   - source: The model's name, for errors.
    /// - Throws: ``ModelBundleError/invalidMetadata(file:reason:)`` for an archive that is
    ///   damaged, compressed, or names files outside itself.
    public init(model: Data, source: String) throws(ModelBundleError) {
        let bytes = [UInt8](model)
        func fail(_ reason: String) -> ModelBundleError {
            .invalidMetadata(file: source, reason: "packed files: \(reason)")
        }
        func u16(_ at: Int) -> Int? {
            at >= 0 && at + 2 <= bytes.count ? Int(bytes[at]) | Int(bytes[at + 1]) << 8 : nil
        }
        func u32(_ at: Int) -> Int? {
            guard at >= 0, at + 4 <= bytes.count else { return nil }
            return Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
        }
        // The end-of-central-directory record: signature PK\5\6, within the last 64 KiB + 22.
        var end: Int?
        var position = bytes.count - 22
        let lowest = max(0, bytes.count - 22 - 65_535)
        while position >= lowest {
            if u32(position) == 0x0605_4B50 {
                end = position
                break
            }
            position -= 1
        }
        guard let end else {
            files = [:]
            return
        }
        guard let entries = u16(end + 10), let directorySize = u32(end + 12), let directoryOffset = u32(end + 16) else {
            throw fail("the end record is truncated")
        }
        guard entries <= Self.maximumEntries else { throw fail("\(entries) entries is too many") }
        // Offsets are relative to the archive's start, which may follow the model bytes.
        let archiveStart = end - directorySize - directoryOffset
        guard archiveStart >= 0, directorySize >= 0 else { throw fail("the central directory lies outside the file") }
        var files: [String: Data] = [:]
        var cursor = archiveStart + directoryOffset
        for _ in 0..<entries {
            guard u32(cursor) == 0x0201_4B50, let method = u16(cursor + 10), let compressed = u32(cursor + 20),
                let size = u32(cursor + 24), let nameLength = u16(cursor + 28), let extraLength = u16(cursor + 30),
                let commentLength = u16(cursor + 32), let localOffset = u32(cursor + 42),
                cursor + 46 + nameLength <= bytes.count
            else { throw fail("a central directory entry is damaged") }
            let name = String(decoding: bytes[(cursor + 46)..<(cursor + 46 + nameLength)], as: UTF8.self)
            guard !name.isEmpty, !name.contains("/"), !name.contains("\\"), name != "..", name != "." else {
                throw fail("the entry \"\(name)\" is not a plain file name")
            }
            guard method == 0, compressed == size else {
                throw fail("\(name) is compressed; the metadata writers store files uncompressed")
            }
            guard size <= Self.maximumEntrySize else { throw fail("\(name) is \(size) bytes, over the limit") }
            let local = archiveStart + localOffset
            guard u32(local) == 0x0403_4B50, let localName = u16(local + 26), let localExtra = u16(local + 28) else {
                throw fail("the local header of \(name) is damaged")
            }
            let start = local + 30 + localName + localExtra
            guard start >= 0, start + size <= bytes.count else { throw fail("\(name) runs past the end of the file") }
            files[name] = Data(bytes[start..<(start + size)])
            cursor += 46 + nameLength + extraLength + commentLength
        }
        self.files = files
    }
}
