// SHA-256 digests through CDigest (libcrypto).
//
// Invariants: a context from nr_sha256_begin is ended exactly once (which frees it), on every
// path; the pointers handed to C live only for the call.

internal import CDigest
package import FoundationEssentials

/// SHA-256, the digest that names a model's bytes (check verdicts, results-file identities).
package enum SHA256 {
    /// The digest of some bytes, as 64 lowercase hex digits.
    ///
    /// - Parameter data: The bytes.
    /// - Returns: The hex digest.
    /// - Complexity: O(n); about 1 GB/s with the CPU's SHA instructions, in any build mode.
    package static func hexDigest(of data: Data) -> String {
        hex(digest(of: data))
    }

    /// The digest of some bytes.
    ///
    /// - Parameter data: The bytes.
    /// - Returns: The 32 bytes of the digest.
    package static func digest(of data: Data) -> [UInt8] {
        guard let context = nr_sha256_begin() else {
            preconditionFailure("libcrypto could not allocate a SHA-256 context (out of memory).")
        }
        let fed = data.withUnsafeBytes { nr_sha256_update(context, $0.baseAddress, $0.count) }
        var digest = [UInt8](repeating: 0, count: 32)
        let ended = digest.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.map { nr_sha256_end(context, $0) } ?? 0
        }
        precondition(fed == 1 && ended == 1, "libcrypto failed to compute a SHA-256 digest.")
        return digest
    }

    /// An incremental digest, for bytes that arrive in pieces (a download).
    ///
    ///     var hasher = SHA256.Hasher()
    ///     for chunk in chunks { hasher.update(chunk) }
    ///     let digest = hasher.finalize()
    package final class Hasher {
        private var context: UnsafeMutableRawPointer?

        /// Starts a digest.
        package init() {
            guard let context = nr_sha256_begin() else {
                preconditionFailure("libcrypto could not allocate a SHA-256 context (out of memory).")
            }
            self.context = context
        }

        /// Adds bytes.
        ///
        /// - Parameter bytes: The next bytes.
        package func update(_ bytes: UnsafeRawBufferPointer) {
            guard let context else { preconditionFailure("SHA256.Hasher used after finalize().") }
            precondition(nr_sha256_update(context, bytes.baseAddress, bytes.count) == 1, "libcrypto failed to hash.")
        }

        /// Adds bytes.
        ///
        /// - Parameter bytes: The next bytes.
        package func update(_ bytes: some ContiguousBytes) {
            bytes.withUnsafeBytes { update($0) }
        }

        /// The digest of everything added, as 64 lowercase hex digits; the hasher is spent.
        ///
        /// - Returns: The hex digest.
        package func finalize() -> String {
            guard let context else { preconditionFailure("SHA256.Hasher finalized twice.") }
            self.context = nil
            var digest = [UInt8](repeating: 0, count: 32)
            let ended = digest.withUnsafeMutableBufferPointer { buffer in
                buffer.baseAddress.map { nr_sha256_end(context, $0) } ?? 0
            }
            precondition(ended == 1, "libcrypto failed to compute a SHA-256 digest.")
            return SHA256.hex(digest)
        }

        deinit {
            if let context {
                var digest = [UInt8](repeating: 0, count: 32)
                _ = digest.withUnsafeMutableBufferPointer { buffer in
                    buffer.baseAddress.map { nr_sha256_end(context, $0) }
                }
            }
        }
    }

    /// The digest of a file, read in pieces.
    ///
    /// - Parameter path: The file.
    /// - Returns: The hex digest and the file's size.
    /// - Throws: ``FileError`` when it cannot be read.
    package static func hexDigest(ofFileAt path: String) throws(FileError) -> (digest: String, size: Int) {
        let hasher = Hasher()
        var size = 0
        try FileIO.forEachChunk(of: path) { chunk in
            hasher.update(chunk)
            size += chunk.count
        }
        return (hasher.finalize(), size)
    }

    /// Bytes as lowercase hex.
    ///
    /// - Parameter bytes: The bytes.
    /// - Returns: Two hex digits per byte.
    package static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
