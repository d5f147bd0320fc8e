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

    /// Opens `path` for reading only if it is a regular file: opened with `O_NONBLOCK` (so a
    /// FIFO, a device or a socket cannot block the open), checked with `fstat`, then switched
    /// back to blocking reads.
    ///
    /// - Parameter path: The file.
    /// - Returns: The descriptor and the file's size; the caller closes the descriptor.
    /// - Throws: ``FileError/unreadable(path:reason:)`` when it cannot be opened or is not a
    ///   regular file (a folder, a named pipe, a device...).
    package static func openRegularFile(_ path: String) throws(FileError) -> (descriptor: Int32, size: Int) {
        let descriptor = PathText.withCString(path) { open($0, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
        guard descriptor >= 0 else { throw .unreadable(path: path, reason: errorText(errno)) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let reason = errorText(errno)
            close(descriptor)
            throw .unreadable(path: path, reason: reason)
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw .unreadable(path: path, reason: "not a regular file (\(fileKind(Int(status.st_mode))))")
        }
        let flags = fcntl(descriptor, F_GETFL)
        guard flags >= 0, fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) == 0 else {
            let reason = errorText(errno)
            close(descriptor)
            throw .unreadable(path: path, reason: reason)
        }
        return (descriptor, Int(status.st_size))
    }

    /// What kind of file a mode describes, for messages: "a folder", "a named pipe"...
    ///
    /// - Parameter mode: A `st_mode`.
    /// - Returns: The kind, with its article.
    package static func fileKind(_ mode: Int) -> String {
        switch mode & Int(S_IFMT) {
        case Int(S_IFREG): "a regular file"
        case Int(S_IFDIR): "a folder"
        case Int(S_IFIFO): "a named pipe"
        case Int(S_IFCHR): "a character device"
        case Int(S_IFBLK): "a block device"
        case Int(S_IFSOCK): "a socket"
        case Int(S_IFLNK): "a symbolic link"
        default: "an unknown kind of file"
        }
    }

    /// Reads `size` bytes from an open file, through interruptions.
    ///
    /// - Parameters:
    ///   - descriptor: The open file.
    ///   - size: How many bytes to read.
    /// - Returns: The bytes, and the `errno` of a failed read (`EIO` for a file that ended
    ///   early), or `nil`.
    package static func readAll(_ descriptor: Int32, count size: Int) -> (data: Data, failure: Int32?) {
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
        return (data, failure)
    }

    /// The contents of the file at `path`, a regular file of at most `maximumSize` bytes.
    ///
    /// The one reader of whole files (see ``openRegularFile(_:)``), so that no path blocks or
    /// reads without end. The size is checked with `fstat` before anything is allocated or read, so a
    /// huge (or sparse) file costs nothing.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - maximumSize: The largest file read.
    /// - Returns: Its bytes.
    /// - Throws: ``FileError/unreadable(path:reason:)``, ``FileError/tooLarge(path:byteCount:limit:)``.
    package static func contents(of path: String, maximumSize: Int = Int.max) throws(FileError) -> Data {
        let (descriptor, size) = try openRegularFile(path)
        guard size <= maximumSize else {
            close(descriptor)
            throw .tooLarge(path: path, byteCount: size, limit: maximumSize)
        }
        defer { close(descriptor) }
        let (data, failure) = readAll(descriptor, count: size)
        if let failure { throw .unreadable(path: path, reason: errorText(failure)) }
        return data
    }

    /// Reads a regular file in pieces of at most 1 MiB, in order.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - body: Called with each piece (valid only during the call).
    /// - Throws: ``FileError/unreadable(path:reason:)``.
    package static func forEachChunk(of path: String, _ body: (UnsafeRawBufferPointer) -> Void) throws(FileError) {
        let (descriptor, _) = try openRegularFile(path)
        defer { close(descriptor) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = read(descriptor, buffer.baseAddress, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable(path: path, reason: errorText(errno))
            }
            if count == 0 { return }
            body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
    }

    /// Reads a regular file from the front, piece by piece into the caller's memory: a file of
    /// gigabytes read into the array it becomes, never held twice.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - body: Called with the file's size and a function that fills a buffer with the next
    ///     bytes (throwing ``FileError/unreadable(path:reason:)`` when fewer are left).
    /// - Returns: What `body` returns.
    /// - Throws: ``FileError``; what `body` throws.
    package static func readSequentially<T>(
        _ path: String,
        _ body: (_ size: Int, _ next: (UnsafeMutableRawBufferPointer) throws -> Void) throws -> T
    ) throws -> T {
        let (descriptor, size) = try openRegularFile(path)
        defer { close(descriptor) }
        func next(_ buffer: UnsafeMutableRawBufferPointer) throws {
            var done = 0
            while done < buffer.count {
                let count = read(descriptor, buffer.baseAddress.map { $0 + done }, buffer.count - done)
                if count < 0 {
                    if errno == EINTR { continue }
                    throw FileError.unreadable(path: path, reason: errorText(errno))
                }
                if count == 0 { throw FileError.unreadable(path: path, reason: "it is cut short") }
                done += count
            }
        }
        return try body(size, next)
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
