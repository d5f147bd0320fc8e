/// What `similar search` and `similar duplicates` ask of an index, whichever its file.
///
/// ``EmbeddingIndex`` (NRINDEX1, exact) or, on Linux, ``FaissEmbeddingIndex`` (FAISS's file and
/// its ``FaissSidecar``); ``SimilarityIndexFile/read(from:)`` opens either.
public protocol SimilarityIndex {
    /// The number of values in each embedding.
    var dimension: Int { get }
    /// The model the embeddings come from, as the index records it.
    var model: String { get }
    /// Each embedding's photo, in id order.
    var paths: [String] { get }
    /// The number of embeddings.
    var count: Int { get }

    /// The position of a photo, by its path as indexed.
    ///
    /// - Parameter path: The path.
    /// - Returns: Its position, or `nil`.
    func position(of path: String) -> Int?

    /// The stored (normalised) embedding of an indexed photo.
    ///
    /// - Parameter index: Its position.
    /// - Returns: Its values.
    /// - Throws: An error of the index's library.
    func embedding(at index: Int) throws -> [Float]

    /// The `k` photos most similar to an embedding, the most similar first.
    ///
    /// - Parameters:
    ///   - query: The embedding (normalised here).
    ///   - k: How many to answer (at most ``count``).
    ///   - excluding: A position left out (the query's own photo).
    /// - Returns: The matches.
    /// - Throws: `NetRunnerError.invalidOption` for a query of another length, or values that
    ///   are not finite or all zero; an error of the index's library.
    func search(_ query: [Float], k: Int, excluding: Int?) throws -> [EmbeddingIndex.Match]

    /// Groups of photos whose embeddings are at least `threshold` alike, largest first
    /// (``EmbeddingIndex/duplicateGroups(threshold:)``).
    ///
    /// - Parameter threshold: The least cosine similarity of a pair.
    /// - Returns: The groups.
    /// - Throws: An error of the index's library.
    func duplicateGroups(threshold: Float) throws -> [EmbeddingIndex.DuplicateGroup]
}

extension EmbeddingIndex: SimilarityIndex {}
