import FoundationEssentials
import NIOCore
import NetRunnerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A bundle folder as a zip archive, made while it is sent (`hub push FOLDER`): nothing is
/// written to disk, so nothing is left behind however the push ends.
///
/// The archive holds the folder under its own name (`flowers.tiobundle/model.json`, ...), as
/// `ZippedModelBundle` unpacks it: every file stored (models barely compress), its CRC-32
/// computed as it is read and written in a data descriptor after it and in the central
/// directory. The sizes are known from the start, so the archive's length is too (the
/// request's `Content-Length`). Names are sorted and times fixed (1980-01-01), so the same
/// folder is the same bytes, and the same digest on the hub.
///
/// Hidden files (`.DS_Store`) are left out; links to files inside the folder are followed; a
/// link that leads out of it (`assets/notes.txt -> ~/.ssh/id_ed25519`), links to folders,
/// devices and sockets are refused (``ContainedFolder``, checked again as each file is opened),
/// as is what a zip without ZIP64 cannot hold (4 GiB). A file that changes size while it is
/// read fails the push.
struct BundleZip: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    /// A file of the folder.
    struct Member: Sendable {
        /// Its path, for messages.
        let path: String
        /// Its path under the folder, where it is read from.
        let relative: String
        /// Its name in the archive (UTF-8).
        let name: [UInt8]
        /// Its size when the folder was listed.
        let size: Int
    }

    /// The folder pushed.
    let folder: String
    /// The folder, for reading its files only while they lie inside it.
    let contained: ContainedFolder
    /// Its files, sorted by name.
    let members: [Member]
    /// The archive's length in bytes.
    let length: Int

    /// The most a zip without ZIP64 holds (sizes and offsets are 32 bits).
    static let maximumLength = Int(UInt32.max)
    /// The pieces a file is read in.
    static let chunkSize = 1 << 20

    /// Lists a bundle folder (nothing is read yet).
    ///
    /// - Parameter folder: A folder holding `model.json` and the files it names.
    /// - Throws: ``HubClientError/unreadable(path:reason:)`` when the folder cannot be listed,
    ///   ``HubClientError/cannotPush(path:reason:)`` when it cannot be a bundle's zip.
    init(folder: String) throws(HubClientError) {
        var trimmed = folder
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        let root = trimmed.split(separator: "/").last.map(String.init) ?? ""
        guard !root.isEmpty, root != ".", root != ".." else {
            throw .cannotPush(path: folder, reason: "name the bundle folder itself (flowers.tiobundle), not . or ..")
        }
        let contained: ContainedFolder
        let entries: [ContainedFolder.Entry]
        do throws(ContainedFolder.Refusal) {
            contained = try ContainedFolder(trimmed, name: "the bundle folder")
            entries = try contained.entries(includingHidden: false)
        } catch .unreadable(".", let reason), .missing(_, nil, let reason) {
            throw .unreadable(path: folder, reason: reason)
        } catch {
            throw .cannotPush(path: folder, reason: error.description)
        }
        var members: [Member] = []
        for entry in entries where !entry.isFolder {
            guard entry.size < Self.maximumLength else {
                throw .cannotPush(
                    path: folder, reason: "\(entry.relative) is larger than a zip without ZIP64 holds (4 GiB)")
            }
            members.append(
                Member(
                    path: trimmed + "/" + entry.relative, relative: entry.relative,
                    name: Array((root + "/" + entry.relative).utf8), size: entry.size))
        }
        guard !members.isEmpty else {
            throw .cannotPush(path: folder, reason: "it holds no files; a bundle folder holds model.json and its model")
        }
        guard members.contains(where: { $0.name == Array("\(root)/model.json".utf8) }) else {
            throw .cannotPush(
                path: folder, reason: "it has no model.json; a bundle folder holds model.json and its model")
        }
        guard members.count < 65_535 else {
            throw .cannotPush(path: folder, reason: "it holds \(members.count) files, more than a zip holds (65,534)")
        }
        var length = 22
        for member in members {
            length += 30 + member.name.count + member.size + 16 + 46 + member.name.count
            guard length <= Self.maximumLength else {
                throw .cannotPush(path: folder, reason: "it is larger than a zip without ZIP64 holds (4 GiB)")
            }
        }
        self.folder = folder
        self.contained = contained
        self.members = members
        self.length = length
    }

    func makeAsyncIterator() -> Iterator { Iterator(contained: contained, members: members) }

    /// Produces the archive: each file's header, its bytes, its descriptor; then the central
    /// directory.
    struct Iterator: AsyncIteratorProtocol {
        let contained: ContainedFolder
        let members: [Member]
        var index = 0
        var current: OpenFile?
        var done = 0
        var crc: UInt32 = 0
        var crcs: [UInt32] = []
        var offsets: [Int] = []
        var offset = 0
        var finished = false

        mutating func next() async throws -> ByteBuffer? {
            guard !finished else { return nil }
            guard index < members.count else {
                finished = true
                return directory()
            }
            let member = members[index]
            guard let file = current else {
                // Opened only while it lies inside the folder: a link swapped in since the
                // folder was listed is refused here.
                let descriptor: Int32
                do throws(ContainedFolder.Refusal) {
                    descriptor = try contained.open(member.relative).descriptor
                } catch .unreadable(_, let reason) {
                    throw HubClientError.unreadable(path: member.path, reason: reason)
                } catch {
                    throw HubClientError.cannotPush(path: contained.path, reason: error.description)
                }
                current = OpenFile(descriptor: descriptor)
                done = 0
                crc = 0
                offsets.append(offset)
                var header = ByteBuffer()
                header.little(0x0403_4B50 as UInt32)
                header.little(20 as UInt16)  // version needed: 2.0
                header.little(BundleZip.flags)
                header.little(0 as UInt16)  // stored
                header.little(BundleZip.time)
                header.little(BundleZip.date)
                header.little(0 as UInt32)  // the CRC-32 follows the data
                header.little(UInt32(member.size))
                header.little(UInt32(member.size))
                header.little(UInt16(member.name.count))
                header.little(0 as UInt16)  // no extra field
                header.writeBytes(member.name)
                offset += header.readableBytes
                return header
            }
            // One byte more than is left: a file grown since it was listed is noticed.
            let wanted = Swift.min(BundleZip.chunkSize, member.size - done + 1)
            var buffer = ByteBuffer()
            let count = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: wanted) { raw -> Int in
                while true {
                    let count = read(file.descriptor, raw.baseAddress, wanted)
                    if count < 0 && errno == EINTR { continue }
                    guard count >= 0 else {
                        throw HubClientError.unreadable(path: member.path, reason: String(cString: strerror(errno)))
                    }
                    return count
                }
            }
            guard done + count <= member.size, count > 0 || done == member.size else {
                throw HubClientError.cannotPush(
                    path: member.path, reason: "it changed while it was sent (\(member.size) bytes when listed)")
            }
            if count > 0 {
                done += count
                crc = buffer.withUnsafeReadableBytes { BundleZip.crc32(crc, $0) }
                offset += count
                return buffer
            }
            // The end of the file: its descriptor.
            current = nil
            crcs.append(crc)
            index += 1
            var trailer = ByteBuffer()
            trailer.little(0x0807_4B50 as UInt32)
            trailer.little(crc)
            trailer.little(UInt32(member.size))
            trailer.little(UInt32(member.size))
            offset += trailer.readableBytes
            return trailer
        }

        /// The central directory and its end record.
        func directory() -> ByteBuffer {
            var buffer = ByteBuffer()
            for (number, member) in members.enumerated() {
                buffer.little(0x0201_4B50 as UInt32)
                buffer.little(3 << 8 | 20 as UInt16)  // made by: Unix, 2.0
                buffer.little(20 as UInt16)
                buffer.little(BundleZip.flags)
                buffer.little(0 as UInt16)
                buffer.little(BundleZip.time)
                buffer.little(BundleZip.date)
                buffer.little(crcs[number])
                buffer.little(UInt32(member.size))
                buffer.little(UInt32(member.size))
                buffer.little(UInt16(member.name.count))
                for _ in 0..<4 { buffer.little(0 as UInt16) }  // extra, comment, disk, internal attributes
                buffer.little(UInt32(0o100644) << 16)  // a regular file, rw-r--r--
                buffer.little(UInt32(offsets[number]))
                buffer.writeBytes(member.name)
            }
            let size = buffer.readableBytes
            buffer.little(0x0605_4B50 as UInt32)
            buffer.little(0 as UInt16)
            buffer.little(0 as UInt16)
            buffer.little(UInt16(members.count))
            buffer.little(UInt16(members.count))
            buffer.little(UInt32(size))
            buffer.little(UInt32(offset))
            buffer.little(0 as UInt16)
            return buffer
        }
    }

    /// A file being read, closed when the iterator moves on or is dropped (a cancelled push).
    final class OpenFile {
        let descriptor: Int32

        init(descriptor: Int32) { self.descriptor = descriptor }

        deinit { close(descriptor) }
    }

    /// Bit 3: sizes and CRC-32 in a descriptor after the data; bit 11: UTF-8 names.
    static let flags: UInt16 = 0x0808
    /// 00:00:00 (MS-DOS time).
    static let time: UInt16 = 0
    /// 1980-01-01 (MS-DOS date).
    static let date: UInt16 = 0x21

    /// The CRC-32 (ISO-HDLC, zlib's) table.
    static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    /// `crc` updated with `bytes` (start from 0).
    static func crc32(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        table.withUnsafeBufferPointer { table in
            var value = ~crc
            for byte in bytes { value = table[Int((value ^ UInt32(byte)) & 0xFF)] ^ (value >> 8) }
            return ~value
        }
    }
}

extension ByteBuffer {
    fileprivate mutating func little(_ value: some FixedWidthInteger) {
        writeInteger(value, endianness: .little)
    }
}
