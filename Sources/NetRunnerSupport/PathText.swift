/// File names as text, losslessly: Linux names are bytes, Swift strings are Unicode.
///
/// A name's valid UTF-8 is kept as it is; each byte that is not part of valid UTF-8 becomes
/// the private-use scalar U+10FF00 + byte (plane 16, which no real name uses), so two
/// different names never become one string, a listed file opens again under its own name, and
/// a results file keyed by name resumes byte for byte. ``withCString(_:_:)`` turns the
/// scalars back into the bytes.
package enum PathText {
    /// The first of the 256 scalars standing for raw bytes.
    static let escapeBase: UInt32 = 0x10_FF00

    /// The text of a name read from the file system.
    ///
    /// - Parameter bytes: The name's bytes (no terminating NUL).
    /// - Returns: The text, invalid bytes escaped.
    package static func string(fromBytes bytes: some Collection<UInt8>) -> String {
        if let valid = String(validating: bytes, as: UTF8.self), !valid.unicodeScalars.contains(where: isEscape) {
            return valid
        }
        let array = Array(bytes)
        var scalars = String.UnicodeScalarView()
        var index = 0
        while index < array.count {
            let lead = array[index]
            let length =
                lead < 0x80 ? 1 : lead >> 5 == 0b110 ? 2 : lead >> 4 == 0b1110 ? 3 : lead >> 3 == 0b11110 ? 4 : 0
            if length > 0, index + length <= array.count,
                let text = String(validating: array[index..<(index + length)], as: UTF8.self),
                let scalar = text.unicodeScalars.first, !isEscape(scalar)
            {
                scalars.append(scalar)
                index += length
            } else if let escape = Unicode.Scalar(escapeBase + UInt32(lead)) {
                scalars.append(escape)
                index += 1
            }
        }
        return String(scalars)
    }

    /// The text of a NUL-terminated name (a `readdir` entry's `d_name`).
    ///
    /// - Parameter name: The C string.
    /// - Returns: The text, invalid bytes escaped.
    package static func string(fromCString name: UnsafePointer<CChar>) -> String {
        let length = strlen(name)
        return name.withMemoryRebound(to: UInt8.self, capacity: length) {
            string(fromBytes: UnsafeBufferPointer(start: $0, count: length))
        }
    }

    /// Runs `body` with the name's bytes as a C string (escaped bytes restored).
    ///
    /// - Parameters:
    ///   - path: The text of a name or path.
    ///   - body: What to do with the C string.
    /// - Returns: What `body` returns.
    package static func withCString<Result>(
        _ path: String, _ body: (UnsafePointer<CChar>) throws -> Result
    ) rethrows -> Result {
        guard path.unicodeScalars.contains(where: isEscape) else { return try path.withCString(body) }
        var bytes: [UInt8] = []
        for scalar in path.unicodeScalars {
            if isEscape(scalar) {
                bytes.append(UInt8(scalar.value - escapeBase))
            } else {
                bytes.append(contentsOf: Array(String(scalar).utf8))
            }
        }
        bytes.append(0)
        return try bytes.withUnsafeBufferPointer { buffer in
            try buffer.withMemoryRebound(to: CChar.self) { characters in
                // The buffer holds at least the terminating NUL, so it has an address.
                guard let start = characters.baseAddress else { return try "".withCString(body) }
                return try body(start)
            }
        }
    }

    /// The real path of a file or folder (links and `.`/`..` resolved), as text.
    ///
    /// - Parameter path: The path.
    /// - Returns: The real path, or `nil` when it does not exist or cannot be resolved.
    package static func realPath(_ path: String) -> String? {
        guard let resolved = withCString(path, { realpath($0, nil) }) else { return nil }
        defer { free(resolved) }
        return string(fromCString: resolved)
    }

    /// Whether a scalar stands for a raw byte.
    static func isEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value >= escapeBase && scalar.value <= escapeBase + 0xFF
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
