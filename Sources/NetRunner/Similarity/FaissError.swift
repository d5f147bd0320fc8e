/// Why a FAISS index could not be made, read, trained, searched or written: FAISS's own message
/// (its C++ exception's), or why NetRunner refused before asking it.
public struct FaissError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// What was being done ("make the index HNSW32", "read photos.faiss").
    public let operation: String
    /// FAISS's message, or NetRunner's reason.
    public let message: String

    /// An error.
    ///
    /// - Parameters:
    ///   - operation: What was being done.
    ///   - message: Why it failed.
    public init(operation: String, message: String) {
        self.operation = operation
        self.message = message
    }

    /// "FAISS could not make the index HNSW3x: ...".
    public var description: String { "FAISS could not \(operation): \(message)" }
}
