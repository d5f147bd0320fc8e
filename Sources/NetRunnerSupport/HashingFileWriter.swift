// A file written piece by piece while its SHA-256 is computed: downloads, resumed downloads and
// uploads all stream to disk this way.
//
// Invariants: the descriptor is closed exactly once (finish, discard or deinit); a writer that
// is neither finished nor told to keep its file removes it (discard, or deinit), so a failed
// transfer never leaves a file that looks whole.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes a file in pieces, hashing them as they go, and counts its bytes.
///
///     let writer = try HashingFileWriter(creating: path)
///     for try await buffer in body { try buffer.withUnsafeReadableBytes { try writer.write($0) } }
///     let digest = try writer.finish()  // fsync, close: the file is kept
package final class HashingFileWriter {
    /// The file.
    package let path: String
    /// The bytes in the file so far (those kept from before included).
    package private(set) var byteCount: Int
    private var descriptor: Int32
    private let hasher = SHA256.Hasher()
    private var finished = false

    /// Creates a new file; an existing one is an error (`O_EXCL`).
    ///
    /// - Parameter path: The file.
    /// - Throws: ``FileError/writeFailed(path:reason:)``.
    package init(creating path: String) throws(FileError) {
        let descriptor = PathText.withCString(path) { open($0, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644) }
        guard descriptor >= 0 else { throw .writeFailed(path: path, reason: String(cString: strerror(errno))) }
        self.path = path
        self.descriptor = descriptor
        byteCount = 0
    }

    /// Continues a partial file: its first `kept` bytes are hashed (read back once) and kept,
    /// the rest written after them; with `kept` 0 the file is started afresh.
    ///
    /// - Parameters:
    ///   - path: The partial file.
    ///   - kept: The bytes of it to keep (its size, or 0).
    /// - Throws: ``FileError``.
    package init(resuming path: String, keeping kept: Int) throws(FileError) {
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (kept == 0 ? O_TRUNC : O_APPEND)
        let descriptor = PathText.withCString(path) { open($0, flags, 0o644) }
        guard descriptor >= 0 else { throw .writeFailed(path: path, reason: String(cString: strerror(errno))) }
        self.path = path
        self.descriptor = descriptor
        byteCount = kept
        if kept > 0 {
            var left = kept
            let hasher = self.hasher
            try FileIO.forEachChunk(of: path) { chunk in
                let count = min(left, chunk.count)
                if count > 0 { hasher.update(UnsafeRawBufferPointer(rebasing: chunk[0..<count])) }
                left -= count
            }
        }
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
        if !finished { unlink(path) }
    }

    /// Writes the next bytes.
    ///
    /// - Parameter bytes: The bytes.
    /// - Throws: ``FileError/writeFailed(path:reason:)`` (a full disk).
    package func write(_ bytes: UnsafeRawBufferPointer) throws(FileError) {
        hasher.update(bytes)
        if let failure = FileIO.writeAll(descriptor, bytes) {
            throw .writeFailed(path: path, reason: String(cString: strerror(failure)))
        }
        byteCount += bytes.count
    }

    /// Flushes the file to disk and closes it; the file is kept.
    ///
    /// - Returns: The SHA-256 of every byte of the file, in lowercase hex.
    /// - Throws: ``FileError/writeFailed(path:reason:)`` when it cannot be flushed (it is then
    ///   removed).
    package func finish() throws(FileError) -> String {
        guard fsync(descriptor) == 0 else {
            throw .writeFailed(path: path, reason: String(cString: strerror(errno)))
        }
        close(descriptor)
        descriptor = -1
        finished = true
        return hasher.finalize()
    }

    /// Closes the file and keeps it as it is, unflushed (a partial download to resume later).
    package func keepPartial() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
        finished = true
    }
}
