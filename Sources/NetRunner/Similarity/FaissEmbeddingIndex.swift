#if canImport(CFaiss)
    import NetRunnerSupport

    #if canImport(Glibc)
        import Glibc
    #endif

    /// Photos' embeddings in a FAISS index, with its ``FaissSidecar``.
    ///
    /// Exact (`Flat`) or approximate (`HNSW32`, `IVF1024,PQ64`...): what
    /// `similar index --index-type` writes and `similar search` and `similar duplicates` read.
    /// Linux only for now.
    ///
    ///     let exact = EmbeddingIndex(...)                       // the embeddings, normalised
    ///     let index = try FaissEmbeddingIndex.build(from: exact, factory: "HNSW32")
    ///     try index.write(to: "photos.faiss")                   // and photos.faiss.json
    ///     let nearest = try FaissEmbeddingIndex.read(from: "photos.faiss").search(query, k: 5)
    ///
    /// The file is FAISS's own: `faiss.read_index("photos.faiss")` in Python loads it unchanged
    /// and answers the same ids and scores (docs/embeddings.md#faiss-indexes).
    ///
    /// It is `Sendable`: its properties never change after it is made, and FAISS searches a
    /// CPU index from several threads at once (its search parameters are set before it is
    /// handed out, when it is built or read).
    public final class FaissEmbeddingIndex: SimilarityIndex, @unchecked Sendable {
        /// The FAISS index: vector `i` is photo ``paths``[i].
        public let index: FaissIndex
        /// What FAISS does not hold: the paths, the model, how the index was built.
        public let sidecar: FaissSidecar

        /// The number of values in each embedding.
        public var dimension: Int { sidecar.dimension }
        /// The model the embeddings come from.
        public var model: String { sidecar.model }
        /// Each embedding's photo, in id order.
        public var paths: [String] { sidecar.paths }
        /// The number of embeddings.
        public var count: Int { sidecar.count }

        /// An index and its sidecar, checked against each other.
        ///
        /// - Parameters:
        ///   - index: The FAISS index.
        ///   - sidecar: Its sidecar.
        ///   - name: The file named in an error.
        /// - Throws: `NetRunnerError.invalidOption` when their counts, dimensions or metrics differ.
        public init(index: FaissIndex, sidecar: FaissSidecar, name: String = "the index") throws {
            func differ(_ what: String, _ mine: some CustomStringConvertible, _ theirs: some CustomStringConvertible)
                -> NetRunnerError
            {
                .invalidOption(
                    name: "index",
                    reason: "\(name) holds \(mine) \(what) and its sidecar says \(theirs): they are not of one index")
            }
            guard index.count == sidecar.count else { throw differ("vectors", index.count, sidecar.count) }
            guard index.dimension == sidecar.dimension else {
                throw differ("values per vector", index.dimension, sidecar.dimension)
            }
            guard index.metric == .innerProduct else { throw differ("a metric", index.metric.rawValue, sidecar.metric) }
            self.index = index
            self.sidecar = sidecar
        }

        /// Reads an index file and its sidecar (``FaissSidecar/path(for:)``).
        ///
        /// - Parameters:
        ///   - path: The FAISS index file.
        ///   - verifying: Whether to check the file's SHA-256 against the sidecar's
        ///     (``FaissSidecar/indexSHA256``, when it has one): the file is opened once, hashed
        ///     and read by FAISS through the same descriptor, so a file replaced meanwhile is
        ///     never paired with the sidecar of another. A server reloading an index does.
        /// - Returns: The index.
        /// - Throws: ``FaissError`` for a file FAISS cannot read; `NetRunnerError.invalidOption`
        ///   for a missing or bad sidecar, or one of another index.
        public static func read(from path: String, verifying: Bool = false) throws -> FaissEmbeddingIndex {
            let sidecarPath = FaissSidecar.path(for: path)
            let sidecar: FaissSidecar
            do {
                sidecar = try FaissSidecar.read(from: sidecarPath)
            } catch let error as FileError {
                throw NetRunnerError.invalidOption(
                    name: "index",
                    reason: "\(path) is a FAISS index, and its sidecar \(sidecarPath) (the photos' paths, the model) "
                        + "cannot be read: \(error.reason)")
            }
            guard verifying, let expected = sidecar.indexSHA256 else {
                return try FaissEmbeddingIndex(index: try FaissIndex.read(from: path), sidecar: sidecar, name: path)
            }
            let descriptor = PathText.withCString(path) { open($0, O_RDONLY | O_CLOEXEC) }
            guard descriptor >= 0 else {
                throw FaissError(operation: "read \(path)", message: String(cString: strerror(errno)))
            }
            defer { close(descriptor) }
            // Linux's name for the open file: the same bytes for the digest and for FAISS.
            let opened = "/proc/self/fd/\(descriptor)"
            guard try SHA256.hexDigest(ofFileAt: opened).digest == expected else {
                throw NetRunnerError.invalidOption(
                    name: "index",
                    reason: "\(path) is not the index file its sidecar \(sidecarPath) was written with "
                        + "(its SHA-256 differs): one of them was replaced without the other, or is being written")
            }
            return try FaissEmbeddingIndex(index: try FaissIndex.read(from: opened), sidecar: sidecar, name: path)
        }

        /// Writes the index file (FAISS's format) and its sidecar, each atomically.
        ///
        /// - Parameter path: The index file; the sidecar goes to ``FaissSidecar/path(for:)``.
        /// - Throws: ``FaissError`` or `FileError`.
        public func write(to path: String) throws {
            // The index first, then the sidecar naming its digest: a reader that finds the
            // new index beside the old sidecar can tell (``read(from:verifying:)``).
            var sidecar = sidecar
            sidecar.indexSHA256 = try index.write(to: path)
            try sidecar.write(to: FaissSidecar.path(for: path))
        }

        /// The position of a photo, by its path as indexed.
        ///
        /// - Parameter path: The path.
        /// - Returns: Its position, or `nil`.
        public func position(of path: String) -> Int? { sidecar.paths.firstIndex(of: path) }

        /// The stored embedding of an indexed photo, as FAISS holds it (PQ: its decoded code).
        ///
        /// - Parameter index: Its position.
        /// - Returns: Its values.
        /// - Throws: ``FaissError``.
        public func embedding(at index: Int) throws -> [Float] {
            try self.index.vectors(index..<index + 1)
        }

        /// The `k` photos most similar to an embedding, the most similar first: FAISS's answer
        /// (exact for `Flat`, approximate otherwise).
        ///
        /// - Parameters:
        ///   - query: The embedding (normalised here).
        ///   - k: How many to answer.
        ///   - excluding: A position left out (the query's own photo).
        /// - Returns: The matches, their similarity FAISS's inner product.
        /// - Throws: `NetRunnerError.invalidOption` for a query of another length, or values
        ///   that are not finite or all zero; ``FaissError``.
        public func search(_ query: [Float], k: Int, excluding: Int? = nil) throws -> [EmbeddingIndex.Match] {
            let query = try Self.normalized(query, dimension: dimension, what: "the query's embedding")
            let wanted = max(0, min(k, count - (excluding == nil ? 0 : 1)))
            guard wanted > 0 else { return [] }
            let found = try index.search(query, k: min(count, wanted + (excluding == nil ? 0 : 1)))[0]
            return found.filter { $0.id != excluding && $0.id < count }.prefix(wanted).map {
                EmbeddingIndex.Match(index: $0.id, path: sidecar.paths[$0.id], similarity: $0.distance)
            }
        }

        /// Groups of near-duplicates, as ``EmbeddingIndex/duplicateGroups(threshold:)`` finds
        /// them among the vectors FAISS holds (reconstructed: exact for Flat and HNSW).
        ///
        /// - Parameter threshold: The least cosine similarity of a pair.
        /// - Returns: The groups.
        /// - Throws: ``FaissError`` for an index that cannot reconstruct its vectors.
        public func duplicateGroups(threshold: Float) throws -> [EmbeddingIndex.DuplicateGroup] {
            try exact().duplicateGroups(threshold: threshold)
        }

        /// The vectors FAISS holds, with their paths, in an exact ``EmbeddingIndex`` (each one
        /// normalised again: PQ's decoded codes are near unit length, not at it).
        ///
        /// - Returns: The index.
        /// - Throws: ``FaissError``; `NetRunnerError.invalidOption` for a vector of no direction.
        public func exact() throws -> EmbeddingIndex {
            var exact = EmbeddingIndex(dimension: dimension, model: model)
            let chunk = 65_536
            for start in stride(from: 0, to: count, by: chunk) {
                let rows = start..<min(start + chunk, count)
                let values = try index.vectors(rows)
                for row in rows {
                    let offset = (row - start) * dimension
                    try exact.add(path: sidecar.paths[row], embedding: Array(values[offset..<offset + dimension]))
                }
            }
            return exact
        }

        /// The values divided by their length (in `Double`), checked.
        static func normalized(_ values: [Float], dimension: Int, what: String) throws -> [Float] {
            guard values.count == dimension else {
                throw NetRunnerError.invalidOption(
                    name: "embedding",
                    reason: "\(what) has \(values.count) values; this index holds embeddings of \(dimension)")
            }
            guard values.allSatisfy(\.isFinite) else {
                throw NetRunnerError.invalidOption(
                    name: "embedding", reason: "\(what) holds a value that is not a number")
            }
            let length = values.reduce(Double(0)) { $0 + Double($1) * Double($1) }.squareRoot()
            guard length > 0 else {
                throw NetRunnerError.invalidOption(
                    name: "embedding", reason: "\(what) is all zeros: it has no direction")
            }
            return values.map { Float(Double($0) / length) }
        }
    }
#endif
