import Hummingbird

/// Where the hub keeps published files, named by their SHA-256 (lowercase hex): versions with
/// the same bytes share one blob, and a blob never changes once stored.
///
/// The routes and the gates use this protocol only; where the bytes lie is the
/// implementation's (``FileBlobStore``: files in the data folder). Another backend (an object
/// store) is one more type conforming to it.
protocol BlobStore: Sendable {
    /// Whether a blob is stored.
    ///
    /// - Parameter sha256: Its digest.
    /// - Returns: Whether it is there.
    func contains(_ sha256: String) async -> Bool

    /// The size of a blob in bytes, `nil` when it is not stored.
    ///
    /// - Parameter sha256: Its digest.
    /// - Returns: Its size.
    func size(of sha256: String) async -> Int?

    /// Takes a verified local file into the store under its digest; the file is gone after
    /// (moved in, or removed when the blob was there already).
    ///
    /// - Parameters:
    ///   - file: The file (in the data folder's `uploads`).
    ///   - sha256: Its digest.
    /// - Throws: ``HubError/conflict(_:)`` when it cannot be stored.
    func put(movingFile file: String, sha256: String) async throws

    /// A blob's bytes, or those of a range of it, as a response body, read as it is sent.
    ///
    /// - Parameters:
    ///   - sha256: Its digest (stored: ``contains(_:)``).
    ///   - range: The bytes to send (within ``size(of:)``), or `nil` for all of them.
    ///   - context: The request's context.
    /// - Returns: The body.
    /// - Throws: The store's errors when the blob cannot be read.
    func body(of sha256: String, range: ClosedRange<Int>?, context: some RequestContext) async throws -> ResponseBody

    /// Makes a blob a local file at `path`, for a child process to read (an evaluation).
    ///
    /// ``FileBlobStore`` links it (no copy); a remote store would download it.
    ///
    /// - Parameters:
    ///   - sha256: Its digest.
    ///   - path: Where the file is to be (its folder exists; nothing is there yet).
    /// - Throws: A message saying why it could not.
    func materialise(_ sha256: String, at path: String) async throws
}
