// Reading whole files and writing them atomically, with POSIX calls.
//
// Invariants: every opened descriptor is closed on every path (defer); reads and writes loop
// until the requested count or an error, retrying EINTR; an atomic write creates its
// temporary file with O_EXCL in the destination's folder (so rename(2) is atomic), and on any
// failure unlinks it, so the destination is either the old file or the complete new one.

package import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

package enum FileIO {
    private static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// The contents of the file at `path`, a regular file of at most `maximumSize` bytes.
    ///
    /// The size is checked with `fstat` before anything is allocated or read, so a huge (or
    /// sparse) file costs nothing.
    package static func contents(of path: String, maximumSize: Int = Int.max) throws(FileError) -> Data {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable(path: path, reason: errorText(errno)) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .unreadable(path: path, reason: errorText(errno)) }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw .unreadable(path: path, reason: "not a regular file")
        }
        let size = Int(status.st_size)
        guard size <= maximumSize else { throw .tooLarge(path: path, byteCount: size, limit: maximumSize) }
        var data = Data(count: size)
        let failure: Int32? = data.withUnsafeMutableBytes { buffer -> Int32? in
            guard let base = buffer.baseAddress else { return nil }
            var done = 0
            while done < size {
                let count = read(descriptor, base + done, size - done)
                if count < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                if count == 0 { break }
                done += count
            }
            return done == size ? nil : EIO
        }
        if let failure { throw .unreadable(path: path, reason: errorText(failure)) }
        return data
    }

    /// Writes every byte to a descriptor, retrying short writes and EINTR.
    ///
    /// - Returns: `nil`, or the errno of the write that failed.
    package static func writeAll(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer) -> Int32? {
        guard let base = buffer.baseAddress else { return nil }
        var done = 0
        while done < buffer.count {
            let count = write(descriptor, base + done, buffer.count - done)
            if count < 0 {
                if errno == EINTR { continue }
                return errno
            }
            done += count
        }
        return nil
    }

    /// Writes `data` to `path` through a temporary file in the same folder and `rename(2)`.
    package static func writeAtomically(_ data: Data, to path: String) throws(FileError) {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard !name.isEmpty else { throw .writeFailed(path: path, reason: "the path names a folder") }
        var temporary = ""
        var descriptor: Int32 = -1
        for attempt in 0..<100 {
            let suffix = String(UInt64.random(in: 0...UInt64.max), radix: 36)
            temporary = "\(folder.isEmpty ? "" : folder)/.\(name).\(getpid()).\(attempt).\(suffix).tmp"
            descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            if descriptor >= 0 || errno != EEXIST { break }
        }
        guard descriptor >= 0 else { throw .writeFailed(path: path, reason: errorText(errno)) }
        var failure: Int32? = data.withUnsafeBytes { writeAll(descriptor, $0) }
        if failure == nil, fsync(descriptor) != 0 { failure = errno }
        if close(descriptor) != 0, failure == nil { failure = errno }
        if failure == nil, rename(temporary, path) != 0 { failure = errno }
        if let failure {
            unlink(temporary)
            throw .writeFailed(path: path, reason: errorText(failure))
        }
    }
}
