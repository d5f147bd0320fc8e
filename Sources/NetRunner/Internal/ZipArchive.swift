// Reading zip archives: the files appended to TFLite models and zipped model bundles.
//
// Invariants: every offset and size is checked against the archive's size before it is read;
// declared sizes are capped before anything is allocated; entries are read in chunks of at
// most `chunkSize` bytes (an archive on disk is never read whole) and inflated into a bounded
// buffer; every entry's size and CRC-32 are checked against the central directory; entry names
// are plain relative paths (no leading "/", no "..", no backslash) and symbolic-link entries
// are refused, so nothing read can point outside the archive's own tree. Descriptors are
// closed when the archive is released.

internal import CArchive
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

struct ZipArchive {
    /// One file of the archive, as its central directory describes it.
    struct Entry {
        var name: String
        var method: Int
        var compressedSize: Int
        var size: Int
        var crc32: UInt32
        /// Where the entry's local header starts, from the start of the source.
        var localHeader: Int
    }

    struct Limits {
        var maximumEntries = 4096
        var maximumEntrySize = 512 << 20
        var maximumTotalSize = 1 << 30
        var allowsFolders = true
        var allowsCompression = true
    }

    /// The bytes an archive is read from: held in memory, or a file read with pread(2).
    final class Source: @unchecked Sendable {
        // Sendable: immutable after init; pread(2) on one descriptor is safe from any thread.
        let count: Int
        private let memory: Data?
        private let descriptor: Int32

        init(data: Data) {
            memory = data
            count = data.count
            descriptor = -1
        }

        /// Opens a regular file; `nil` when it cannot be opened or is not a regular file.
        init?(path: String) {
            let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
            guard descriptor >= 0 else { return nil }
            var info = stat()
            guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
                close(descriptor)
                return nil
            }
            self.descriptor = descriptor
            self.count = Int(info.st_size)
            self.memory = nil
        }

        deinit {
            if descriptor >= 0 { close(descriptor) }
        }

        /// `length` bytes at `offset`, or `nil` when they are not all there.
        func bytes(at offset: Int, length: Int) -> [UInt8]? {
            guard offset >= 0, length >= 0, offset <= count, length <= count - offset else { return nil }
            if let memory {
                return [UInt8](memory[memory.startIndex + offset..<memory.startIndex + offset + length])
            }
            var result = [UInt8](repeating: 0, count: length)
            var done = 0
            let ok = result.withUnsafeMutableBytes { buffer -> Bool in
                guard let base = buffer.baseAddress else { return length == 0 }
                while done < length {
                    let got = pread(descriptor, base + done, length - done, off_t(offset + done))
                    if got < 0 && errno == EINTR { continue }
                    guard got > 0 else { return false }
                    done += got
                }
                return true
            }
            return ok ? result : nil
        }
    }

    /// The entries, in the central directory's order (folders left out).
    let entries: [Entry]
    let source: Source
    let limits: Limits
    private let fail: (String) -> any Error

    /// The largest piece read or inflated at once.
    static let chunkSize = 1 << 20

    /// Reads the central directory of the archive that ends `source`; `nil` when there is no
    /// end-of-central-directory record (no archive).
    static func reading(_ source: Source, limits: Limits, fail: @escaping (String) -> any Error) throws -> ZipArchive? {
        let tailLength = min(source.count, 22 + 65_535)
        guard let tail = source.bytes(at: source.count - tailLength, length: tailLength) else {
            throw fail("the file cannot be read")
        }
        func u16(_ bytes: [UInt8], _ at: Int) -> Int? {
            at >= 0 && at + 2 <= bytes.count ? Int(bytes[at]) | Int(bytes[at + 1]) << 8 : nil
        }
        func u32(_ bytes: [UInt8], _ at: Int) -> Int? {
            guard at >= 0, at + 4 <= bytes.count else { return nil }
            return Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
        }
        var endInTail: Int?
        var position = tail.count - 22
        while position >= 0 {
            if u32(tail, position) == 0x0605_4B50 {
                endInTail = position
                break
            }
            position -= 1
        }
        guard let endInTail else { return nil }
        let end = source.count - tailLength + endInTail
        guard let count = u16(tail, endInTail + 10), let directorySize = u32(tail, endInTail + 12),
            let directoryOffset = u32(tail, endInTail + 16)
        else { throw fail("the end record is truncated") }
        guard count <= limits.maximumEntries else { throw fail("\(count) entries is too many") }
        // Offsets count from the archive's start, which may follow other bytes (a model).
        let archiveStart = end - directorySize - directoryOffset
        guard archiveStart >= 0, let directory = source.bytes(at: archiveStart + directoryOffset, length: directorySize)
        else { throw fail("the central directory lies outside the file") }
        var entries: [Entry] = []
        var total = 0
        var cursor = 0
        for _ in 0..<count {
            guard u32(directory, cursor) == 0x0201_4B50, let flags = u16(directory, cursor + 8),
                let method = u16(directory, cursor + 10), let crc = u32(directory, cursor + 16),
                let compressed = u32(directory, cursor + 20), let size = u32(directory, cursor + 24),
                let nameLength = u16(directory, cursor + 28), let extraLength = u16(directory, cursor + 30),
                let commentLength = u16(directory, cursor + 32), let attributes = u32(directory, cursor + 38),
                let localOffset = u32(directory, cursor + 42), cursor + 46 + nameLength <= directory.count
            else { throw fail("a central directory entry is damaged") }
            let name = String(decoding: directory[(cursor + 46)..<(cursor + 46 + nameLength)], as: UTF8.self)
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
            if method == 0, compressed != size { throw fail("\(name) has inconsistent sizes") }
            total += size
            entries.append(
                Entry(
                    name: name, method: method, compressedSize: compressed, size: size, crc32: UInt32(crc),
                    localHeader: archiveStart + localOffset))
        }
        return ZipArchive(entries: entries, source: source, limits: limits, fail: fail)
    }

    /// Reads the archive that ends `bytes` and every entry in it (the files packed into a model).
    static func read(_ bytes: Data, limits: Limits, fail: @escaping (String) -> any Error) throws -> [(
        name: String, data: Data
    )]? {
        guard let archive = try reading(Source(data: bytes), limits: limits, fail: fail) else { return nil }
        return try archive.entries.map { (name: $0.name, data: try archive.data(of: $0)) }
    }

    /// An entry's bytes, checked against its size and CRC-32.
    func data(of entry: Entry) throws -> Data {
        var data = Data()
        data.reserveCapacity(entry.size)
        try extract(entry) { data.append(contentsOf: $0) }
        return data
    }

    /// Streams an entry's bytes to `sink`, a chunk at a time, then checks the size and CRC-32
    /// (so a sink must not trust what it was given until this returns).
    func extract(_ entry: Entry, into sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        let name = entry.name
        guard let header = source.bytes(at: entry.localHeader, length: 30),
            header.starts(with: [0x50, 0x4B, 0x03, 0x04])
        else { throw fail("the local header of \(name) is damaged") }
        let start =
            entry.localHeader + 30 + (Int(header[26]) | Int(header[27]) << 8)
            + (Int(header[28]) | Int(header[29]) << 8)
        guard start <= source.count, entry.compressedSize <= source.count - start else {
            throw fail("\(name) runs past the end of the file")
        }
        var crc: UInt32 = 0
        var produced = 0
        func emit(_ bytes: UnsafeRawBufferPointer) throws {
            guard bytes.count > 0 else { return }
            produced += bytes.count
            guard produced <= entry.size else { throw fail("\(name) does not expand to its declared size") }
            crc = nr_crc32(crc, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
            try sink(bytes)
        }
        var offset = start
        var remaining = entry.compressedSize
        if entry.method == 0 {
            while remaining > 0 {
                let length = min(Self.chunkSize, remaining)
                guard let chunk = source.bytes(at: offset, length: length) else {
                    throw fail("\(name) runs past the end of the file")
                }
                try chunk.withUnsafeBytes { try emit($0) }
                offset += length
                remaining -= length
            }
        } else {
            try inflate(name: name, offset: offset, remaining: remaining, emit: emit)
        }
        guard produced == entry.size else { throw fail("\(name) does not expand to its declared size") }
        guard crc == entry.crc32 else {
            throw fail(
                "\(name) is corrupt: its CRC-32 is \(String(crc, radix: 16)), the archive says \(String(entry.crc32, radix: 16))"
            )
        }
    }

    /// Inflates raw DEFLATE data from the source through a bounded output buffer.
    private func inflate(
        name: String, offset start: Int, remaining total: Int, emit: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        guard let state = nr_inflate_begin() else { throw fail("\(name) cannot be inflated (zlib did not start)") }
        defer { nr_inflate_end(state) }
        var output = [UInt8](repeating: 0, count: Self.chunkSize)
        var offset = start
        var remaining = total
        var input: [UInt8] = []
        var position = 0
        while true {
            if position == input.count, remaining > 0 {
                let length = min(Self.chunkSize, remaining)
                guard let chunk = source.bytes(at: offset, length: length) else {
                    throw fail("\(name) runs past the end of the file")
                }
                input = chunk
                position = 0
                offset += length
                remaining -= length
            }
            var used = 0
            var made = 0
            let status = input.withUnsafeBufferPointer { inputBuffer in
                output.withUnsafeMutableBufferPointer { outputBuffer -> Int32 in
                    guard let out = outputBuffer.baseAddress else { return -1 }
                    return nr_inflate_step(
                        state, inputBuffer.baseAddress.map { $0 + position }, input.count - position, &used, out,
                        outputBuffer.count, &made)
                }
            }
            position += used
            try output.withUnsafeBytes { try emit(UnsafeRawBufferPointer(rebasing: $0[0..<made])) }
            if status == 1 { return }
            if status < 0 { throw fail("\(name) is corrupt") }
            if used == 0 && made == 0 && position == input.count && remaining == 0 {
                throw fail("\(name) is corrupt: its data ends before the stream does")
            }
        }
    }
}
