// Reading model bytes from disk and the cheap checks done before LiteRT sees them.
//
// Invariants: the returned memory holds exactly the file's bytes as read in one pass;
// LiteRT is only ever given bytes, never the path, because its file loader does not run
// the flatbuffer verifier.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

enum ModelFile {
    /// The largest model accepted: the flatbuffer format's own 2 GiB limit.
    static let maximumSize = Int(Int32.max)

    /// Reads the whole file at `path` into aligned memory.
    static func read(_ path: String) throws(InterpreterError) -> AlignedMemory {
        // O_NONBLOCK: a named pipe (or a device) must not block the open; it is refused below
        // and the flag cleared for the reads of a regular file.
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw .failedToLoadModel(reason: "\(path): \(errorText(errno)).")
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw .failedToLoadModel(reason: "\(path): \(errorText(errno)).")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            let kind = (info.st_mode & S_IFMT) == S_IFIFO ? " (a named pipe)" : ""
            throw .failedToLoadModel(reason: "\(path): not a regular file\(kind).")
        }
        let flags = fcntl(descriptor, F_GETFL)
        guard flags >= 0, fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) == 0 else {
            throw .failedToLoadModel(reason: "\(path): \(errorText(errno)).")
        }
        let size = Int(info.st_size)
        guard size <= maximumSize else {
            throw .failedToLoadModel(reason: "\(path): \(size) bytes is over the 2 GiB limit of TFLite files.")
        }
        guard let memory = AlignedMemory(count: size) else {
            throw .failedToLoadModel(reason: "\(path): not enough memory to read \(size) bytes.")
        }
        var offset = 0
        while offset < size {
            let got = systemRead(descriptor, memory.base + offset, size - offset)
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else {
                let reason = got < 0 ? errorText(errno) : "the file shrank while it was read"
                throw .failedToLoadModel(reason: "\(path): \(reason).")
            }
            offset += got
        }
        try validateHeader(memory, source: path)
        return memory
    }

    /// Checks what can be checked without LiteRT: size and the `TFL3` file identifier.
    static func validateHeader(_ memory: AlignedMemory, source: String) throws(InterpreterError) {
        guard memory.count > 0 else {
            throw .failedToLoadModel(reason: "\(source): the file is empty.")
        }
        guard memory.count >= 8 else {
            throw .failedToLoadModel(
                reason: "\(source): \(memory.count) bytes is too small to be a TensorFlow Lite model.")
        }
        let identifier = (4..<8).map { memory.base.load(fromByteOffset: $0, as: UInt8.self) }
        guard identifier == Array("TFL3".utf8) else {
            // What the file looks like, not its raw bytes (a text file's "o, t" told nobody anything).
            let what = knownFormat(memory).map { "it looks like \($0)" } ?? "its bytes 4-7 are not the identifier"
            throw .failedToLoadModel(
                reason: "\(source): not a TensorFlow Lite model (\(what); a .tflite file has \"TFL3\" at bytes 4-7).")
        }
    }

    /// A name for common non-model files, from their first bytes, to make the error useful.
    static func knownFormat(_ memory: AlignedMemory) -> String? {
        let head = (0..<min(memory.count, 12)).map { memory.base.load(fromByteOffset: $0, as: UInt8.self) }
        if head.count == 12, head.starts(with: Array("RIFF".utf8)), Array(head[8..<12]) == Array("WEBP".utf8) {
            return "a WebP image"
        }
        if head.count == 12, Array(head[4..<8]) == Array("ftyp".utf8) {
            switch String(decoding: head[8..<12], as: UTF8.self) {
            case "avif", "avis": return "an AVIF image"
            case "heic", "heix", "heim", "heis", "mif1", "msf1": return "a HEIC image"
            default: break
            }
        }
        let signatures: [([UInt8], String)] = [
            ([0x89, 0x50, 0x4E, 0x47], "a PNG image"),
            ([0xFF, 0xD8, 0xFF], "a JPEG image"),
            ([0x42, 0x4D], "a BMP image"),
            ([0x47, 0x49, 0x46, 0x38], "a GIF image"),
            ([0x49, 0x49, 0x2A, 0x00], "a TIFF image"),
            ([0x4D, 0x4D, 0x00, 0x2A], "a TIFF image"),
            ([0x50, 0x4B, 0x03, 0x04], "a zip archive"),
            ([0x7F, 0x45, 0x4C, 0x46], "an executable (ELF)"),
            ([0x25, 0x50, 0x44, 0x46], "a PDF document"),
            ([0x7B], "JSON text"),
        ]
        if let known = signatures.first(where: { head.starts(with: $0.0) }) { return known.1 }
        // Text: the first KiB is printable ASCII or UTF-8 with line breaks and tabs, no NUL.
        let sample = (0..<min(memory.count, 1024)).map { memory.base.load(fromByteOffset: $0, as: UInt8.self) }
        let printable = sample.allSatisfy { $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || ($0 >= 0x20 && $0 != 0x7F) }
        return printable && String(validating: sample, as: UTF8.self) != nil ? "text" : nil
    }

    static func errorText(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text).lowercased()
    }
}

/// `read(2)`, named apart from Swift's own `read` methods.
@inline(__always)
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
