// Reading zip archives: the files appended to TFLite models and zipped model bundles.
//
// Invariants: every offset and size is checked against `bytes` before it is read; declared
// sizes are capped before anything is allocated; inflation writes exactly the declared size
// into a buffer of that size (CArchive never writes past it); entry names are plain relative
// paths (no leading "/", no "..", no backslash) and symbolic-link entries are refused, so
// nothing read can point outside the archive's own tree.

internal import CArchive
import FoundationEssentials

struct ZipArchive {
    struct Entry {
        var name: String
        var data: Data
    }

    /// The entries, in the central directory's order (folders left out).
    let entries: [Entry]

    struct Limits {
        var maximumEntries = 4096
        var maximumEntrySize = 512 << 20
        var maximumTotalSize = 1 << 30
        var allowsFolders = true
        var allowsCompression = true
    }

    /// Reads the archive that ends `bytes`; `nil` when there is no end-of-central-directory
    /// record (no archive).
    static func read(_ bytes: [UInt8], limits: Limits, fail: (String) -> any Error) throws -> ZipArchive? {
        func u16(_ at: Int) -> Int? {
            at >= 0 && at + 2 <= bytes.count ? Int(bytes[at]) | Int(bytes[at + 1]) << 8 : nil
        }
        func u32(_ at: Int) -> Int? {
            guard at >= 0, at + 4 <= bytes.count else { return nil }
            return Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
        }
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
        guard let end else { return nil }
        guard let count = u16(end + 10), let directorySize = u32(end + 12), let directoryOffset = u32(end + 16) else {
            throw fail("the end record is truncated")
        }
        guard count <= limits.maximumEntries else { throw fail("\(count) entries is too many") }
        // Offsets count from the archive's start, which may follow other bytes (a model).
        let archiveStart = end - directorySize - directoryOffset
        guard archiveStart >= 0 else { throw fail("the central directory lies outside the file") }
        var entries: [Entry] = []
        var total = 0
        var cursor = archiveStart + directoryOffset
        for _ in 0..<count {
            guard u32(cursor) == 0x0201_4B50, let flags = u16(cursor + 8), let method = u16(cursor + 10),
                let compressed = u32(cursor + 20), let size = u32(cursor + 24), let nameLength = u16(cursor + 28),
                let extraLength = u16(cursor + 30), let commentLength = u16(cursor + 32),
                let attributes = u32(cursor + 38), let localOffset = u32(cursor + 42),
                cursor + 46 + nameLength <= bytes.count
            else { throw fail("a central directory entry is damaged") }
            let name = String(decoding: bytes[(cursor + 46)..<(cursor + 46 + nameLength)], as: UTF8.self)
            cursor += 46 + nameLength + extraLength + commentLength
            let parts = name.split(separator: "/", omittingEmptySubsequences: false)
            guard !name.isEmpty, !name.hasPrefix("/"), !name.contains("\\"), !parts.contains(".."),
                limits.allowsFolders || !name.contains("/")
            else { throw fail("the entry \"\(name)\" is not a plain relative path inside the archive") }
            if (attributes >> 16) & 0o170000 == 0o120000 {
                throw fail("the entry \"\(name)\" is a symbolic link")
            }
            if name.hasSuffix("/") { continue }  // a folder
            guard flags & 1 == 0 else { throw fail("\(name) is encrypted") }
            guard method == 0 || (method == 8 && limits.allowsCompression) else {
                throw fail("\(name) uses compression method \(method)")
            }
            guard size <= limits.maximumEntrySize, total + size <= limits.maximumTotalSize else {
                throw fail("\(name) would expand beyond the size limit")
            }
            total += size
            let local = archiveStart + localOffset
            guard u32(local) == 0x0403_4B50, let localName = u16(local + 26), let localExtra = u16(local + 28) else {
                throw fail("the local header of \(name) is damaged")
            }
            let start = local + 30 + localName + localExtra
            guard start >= 0, start + compressed <= bytes.count else {
                throw fail("\(name) runs past the end of the file")
            }
            if method == 0 {
                guard compressed == size else { throw fail("\(name) has inconsistent sizes") }
                entries.append(Entry(name: name, data: Data(bytes[start..<(start + size)])))
                continue
            }
            var output = [UInt8](repeating: 0, count: size)
            let status = bytes.withUnsafeBufferPointer { input in
                output.withUnsafeMutableBufferPointer { out in
                    guard let inputBase = input.baseAddress else { return Int32(1) }
                    return nr_inflate_raw(inputBase + start, compressed, out.baseAddress, size)
                }
            }
            guard status == 0 else {
                throw fail(status == 2 ? "\(name) does not expand to its declared size" : "\(name) is corrupt")
            }
            entries.append(Entry(name: name, data: Data(output)))
        }
        return ZipArchive(entries: entries)
    }
}
