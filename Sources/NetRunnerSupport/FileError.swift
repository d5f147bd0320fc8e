/// Why a whole-file read or an atomic write failed: the path and the system's reason.
///
/// Each module that reads files turns it into its own error (an unreadable image is an
/// `ImageError`, an unreadable `test.json` an `EvaluationError`).
package enum FileError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The file could not be opened or read (missing, not a regular file, I/O error).
    case unreadable(path: String, reason: String)
    /// The file could not be written.
    case writeFailed(path: String, reason: String)
    /// The file is larger than the reader's limit (checked with `fstat` before reading).
    case tooLarge(path: String, byteCount: Int, limit: Int)

    /// The system's reason alone (for an error that names the file its own way).
    package var reason: String {
        switch self {
        case .unreadable(_, let reason), .writeFailed(_, let reason): reason
        case .tooLarge(_, let byteCount, let limit): "it is \(byteCount) bytes, more than the limit of \(limit) bytes"
        }
    }

    /// A message naming the file.
    package var description: String {
        switch self {
        case .unreadable(let path, let reason):
            "Cannot read \(path): \(reason). Check that the file exists and is readable."
        case .writeFailed(let path, let reason):
            "Cannot write \(path): \(reason). Nothing was written; check the folder exists and has room."
        case .tooLarge(let path, let byteCount, let limit):
            "Cannot read \(path): it is \(byteCount) bytes, more than the limit of \(limit) bytes."
        }
    }
}
