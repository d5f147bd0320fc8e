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
