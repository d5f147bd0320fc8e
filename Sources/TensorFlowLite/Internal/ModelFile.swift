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
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw .failedToLoadModel(reason: "\(path): \(errorText(errno)).")
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw .failedToLoadModel(reason: "\(path): \(errorText(errno)).")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw .failedToLoadModel(reason: "\(path): not a regular file.")
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
            let shown = identifier.map { (32..<127).contains($0) ? String(UnicodeScalar($0)) : "." }.joined()
            throw .failedToLoadModel(
                reason: "\(source): not a TensorFlow Lite model (file identifier \"\(shown)\", expected \"TFL3\").")
        }
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
