import Dispatch
import FoundationEssentials
import NetRunnerImage
import NetRunnerSupport
import Synchronization

/// Photos' embeddings for finding similar photos: the k nearest to a photo, and groups of
/// near-duplicates.
///
///     var index = EmbeddingIndex(dimension: 1024, model: "mobilenet-v1-1.0-224-quant-embedding-extractor")
///     try index.add(path: "cat.jpg", embedding: catResult.embedding)
///     let nearest = try index.search(dogResult.embedding, k: 5)   // most similar first
///     try index.write(to: "photos.nrindex")
///
/// Exact search: every stored embedding is compared with the query (cosine similarity, the
/// embeddings stored L2-normalised, so a dot product), in C with AVX2, on every core.
/// `docs/embeddings.md#how-far-exact-search-goes` gives the measured build and query times and
/// memory at 10,000, 100,000 and 1,000,000 embeddings, and what to use beyond.
public struct EmbeddingIndex: Sendable {
    /// The largest number of values in one embedding an index file may declare.
    public static let maximumDimension = 65_536
    /// The largest number of embeddings an index file may declare.
    public static let maximumCount = 50_000_000

    /// The number of values in each embedding.
    public let dimension: Int
    /// The model the embeddings come from, as the index records it: a catalog id, `hub:NAME`,
    /// or a path (`similar index` writes an absolute one); a query must be embedded by the same
    /// model.
    public private(set) var model: String
    /// Each embedding's photo, in the order added.
    public private(set) var paths: [String] = []
    /// The embeddings, L2-normalised, one after another (`count * dimension` values).
    private(set) var vectors: [Float] = []

    /// The number of embeddings.
    public var count: Int { paths.count }

    /// The bytes the embeddings take in memory.
    public var vectorBytes: Int { vectors.count * MemoryLayout<Float>.size }

    /// An empty index.
    ///
    /// - Parameters:
    ///   - dimension: The number of values in each embedding.
    ///   - model: The model the embeddings come from.
    public init(dimension: Int, model: String) {
        self.dimension = dimension
        self.model = model
    }

    /// The same embeddings recorded as another model's: the id a server serves the index's
    /// model under (the embeddings are shared, not copied).
    ///
    /// - Parameter model: The model's name to record.
    /// - Returns: The index.
    public func recording(model: String) -> EmbeddingIndex {
        var index = self
        index.model = model
        return index
    }

    /// One answer of a search.
    public struct Match: Sendable, Equatable {
        /// The photo's position in ``EmbeddingIndex/paths``.
        public var index: Int
        /// The photo.
        public var path: String
        /// The cosine similarity with the query (1: the same direction).
        public var similarity: Float
    }

    /// Adds a photo's embedding (normalised here).
    ///
    /// - Parameters:
    ///   - path: The photo.
    ///   - embedding: Its embedding, ``dimension`` values.
    /// - Throws: ``NetRunnerError/invalidOption(name:reason:)`` for another length, or values
    ///   that are not finite or all zero (any other finite values are normalised exactly, in
    ///   `Double`: huge and subnormal ones alike).
    public mutating func add(path: String, embedding: [Float]) throws {
        vectors += try normalized(embedding, what: "the embedding of \(path)")
        paths.append(path)
    }

    /// The stored (normalised) embedding of an indexed photo.
    ///
    /// - Parameter index: Its position.
    /// - Returns: Its values.
    public func embedding(at index: Int) -> [Float] {
        Array(vectors[index * dimension..<(index + 1) * dimension])
    }

    /// The position of a photo, by its path as indexed.
    ///
    /// - Parameter path: The path.
    /// - Returns: Its position, or `nil`.
    public func position(of path: String) -> Int? {
        paths.firstIndex(of: path)
    }

    /// The `k` photos most similar to an embedding, the most similar first.
    ///
    /// - Parameters:
    ///   - query: The embedding (any length but ``dimension`` is refused; normalised here).
    ///   - k: How many to answer (at most ``count``).
    ///   - excluding: A position left out (the query's own photo).
    /// - Returns: The matches, each similarity a number (the query and every stored embedding
    ///   are unit vectors: ``read(from:)`` refuses a file holding another).
    /// - Throws: ``NetRunnerError/invalidOption(name:reason:)`` for a query of another length,
    ///   or values that are not finite or all zero.
    public func search(_ query: [Float], k: Int, excluding: Int? = nil) throws -> [Match] {
        let query = try normalized(query, what: "the query's embedding")
        let wanted = max(0, min(k, count - (excluding == nil ? 0 : 1)))
        guard wanted > 0 else { return [] }
        let chunks = Self.chunks(count: count)
        let best = Mutex<[(index: Int, similarity: Float)]>([])
        query.withUnsafeBufferPointer { queryValues in
            vectors.withUnsafeBufferPointer { allValues in
                let (q, all) = (ReadOnly(queryValues), ReadOnly(allValues))
                DispatchQueue.concurrentPerform(iterations: chunks.count) { chunk in
                    var top = TopK(k: wanted)
                    let rows = chunks[chunk]
                    let similarities = DotProducts.of(q.values, with: all.values, rows: rows, dimension: dimension)
                    for (offset, similarity) in similarities.enumerated() where rows.lowerBound + offset != excluding {
                        top.insert(rows.lowerBound + offset, similarity)
                    }
                    best.withLock { $0 += top.items }
                }
            }
        }
        var merged = best.withLock { $0 }
        merged.sort { Self.ranksAbove($0, $1) }
        return merged.prefix(wanted).map { Match(index: $0.index, path: paths[$0.index], similarity: $0.similarity) }
    }

    /// Groups of photos whose embeddings are at least `threshold` alike, each group joined
    /// through pairs above it (a photo in two pairs joins them), largest group first.
    ///
    /// Every pair is compared: `count * (count - 1) / 2` dot products, on every core (3,000
    /// photos: about 4.5 million, a second or two), in memory linear in the index however many
    /// pairs there are (``DuplicateGroup``).
    ///
    /// - Parameter threshold: The least cosine similarity of a pair (0.98: near-duplicates).
    /// - Returns: The groups, each sorted by position.
    public func duplicateGroups(threshold: Float) -> [DuplicateGroup] {
        vectors.withUnsafeBufferPointer {
            Self.duplicateGroups(in: $0, rows: count, dimension: dimension, threshold: threshold)
        }
    }

    // MARK: - Files

    private static let magic = Array("NRINDEX1".utf8)

    /// Writes the index to a file, atomically (the old file or the whole new one).
    ///
    /// The format (little-endian): `NRINDEX1`, the dimension and count (`UInt32`, `UInt64`),
    /// the model's name (`UInt32` length, UTF-8), the embeddings (`Float32`, count x
    /// dimension), then each path (`UInt32` length, UTF-8).
    ///
    /// - Parameter path: The file.
    /// - Throws: ``FileError`` when it cannot be written.
    public func write(to path: String) throws {
        var data = Data(Self.magic)
        func append<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
        }
        func appendText(_ text: String) {
            append(UInt32(text.utf8.count))
            data.append(contentsOf: Array(text.utf8))
        }
        append(UInt32(dimension))
        append(UInt64(count))
        appendText(model)
        #if _endian(big)
            for value in vectors { append(value.bitPattern) }
        #else
            vectors.withUnsafeBytes { data.append(contentsOf: $0) }
        #endif
        for path in paths { appendText(path) }
        try FileIO.writeAtomically(data, to: path)
    }

    /// Reads an index file, checking every size it declares against the file and the limits.
    ///
    /// - Parameter path: The file.
    /// - Returns: The index.
    /// - Throws: ``FileError`` when it cannot be read; ``NetRunnerError/invalidOption(name:reason:)``
    ///   naming the file for one that is not an index or is cut short, or naming the position
    ///   and photo of an embedding that is not a unit vector (not finite, zero, subnormal, or of
    ///   another length: ``unitTolerance``), which would answer a similarity that is no number.
    public static func read(from path: String) throws -> EmbeddingIndex {
        func bad(_ reason: String) -> NetRunnerError {
            .invalidOption(name: "index", reason: "\(path) is not a NetRunner similarity index: \(reason)")
        }
        // Read in order into what it becomes (the embeddings straight into their array), so a
        // million embeddings (4 GB) are never in memory twice.
        return try FileIO.readSequentially(path) { size, next in
            func bytes(_ count: Int) throws -> Data {
                // Every size was checked against the file's: only a file that shrinks meanwhile,
                // or an I/O error, fails here (a FileError naming it).
                var data = Data(count: count)
                try data.withUnsafeMutableBytes { try next($0) }
                return data
            }
            var remaining = size
            let headerSize = magic.count + 4 + 8 + 4
            guard remaining >= headerSize else { throw bad("it is cut short") }
            var header = ByteReader(data: try bytes(headerSize))
            remaining -= headerSize
            guard header.take(magic.count).map(Array.init) == magic else {
                throw bad("it does not start with NRINDEX1")
            }
            guard let dimension32 = header.integer(UInt32.self), let count64 = header.integer(UInt64.self),
                let modelLength = header.integer(UInt32.self)
            else { throw bad("it is cut short") }
            let dimension = Int(dimension32)
            guard (1...maximumDimension).contains(dimension) else { throw bad("a dimension of \(dimension)") }
            guard count64 <= UInt64(maximumCount) else { throw bad("\(count64) embeddings (at most \(maximumCount))") }
            let count = Int(count64)
            guard modelLength <= 65_536, Int(modelLength) <= remaining,
                let model = String(validating: try bytes(Int(modelLength)), as: UTF8.self)
            else { throw bad("its model name is cut short or not UTF-8") }
            remaining -= Int(modelLength)
            let (values, overflow) = count.multipliedReportingOverflow(by: dimension)
            guard !overflow, values <= remaining / MemoryLayout<Float>.size else {
                throw bad("its embeddings are cut short")
            }
            var index = EmbeddingIndex(dimension: dimension, model: model)
            index.vectors = try [Float](unsafeUninitializedCapacity: values) { buffer, initialized in
                // The file is little-endian, as the CPUs this runs on: the bytes are the floats.
                try next(UnsafeMutableRawBufferPointer(buffer))
                #if _endian(big)
                    for position in 0..<values {
                        buffer[position] = Float(bitPattern: UInt32(littleEndian: buffer[position].bitPattern))
                    }
                #endif
                initialized = values
            }
            remaining -= values * MemoryLayout<Float>.size
            var reader = ByteReader(data: try bytes(remaining))
            index.paths.reserveCapacity(count)
            for _ in 0..<count {
                guard let text = reader.text() else { throw bad("its paths are cut short") }
                index.paths.append(text)
            }
            guard reader.remaining == 0 else { throw bad("\(reader.remaining) bytes follow its last path") }
            // Every embedding a unit vector, so that every similarity is a number in -1...1:
            // values of 3e38 (their dot products infinite), NaN, zeros and subnormals are refused.
            try index.vectors.withUnsafeBufferPointer { vectors in
                for row in 0..<count {
                    if let problem = notUnit(vectors, row: row, dimension: dimension) {
                        throw bad("embedding \(row + 1) of \(count) (\(index.paths[row])) \(problem)")
                    }
                }
            }
            return index
        }
    }

    // MARK: - Arithmetic

    /// The values divided by their length, checked.
    private func normalized(_ values: [Float], what: String) throws -> [Float] {
        guard values.count == dimension else {
            throw NetRunnerError.invalidOption(
                name: "embedding",
                reason:
                    "\(what) has \(values.count) values; this index holds embeddings of \(dimension) (model \(model))")
        }
        guard values.allSatisfy(\.isFinite) else {
            throw NetRunnerError.invalidOption(name: "embedding", reason: "\(what) holds a value that is not a number")
        }
        // In Double, where no Float's square overflows or underflows (3.4e38 squared is 1.2e77,
        // the least subnormal's 2e-90): huge and subnormal values are normalised exactly, where
        // Float's length was infinite or zero (or, from subnormal squares, a few bits).
        let length = values.reduce(Double(0)) { $0 + Double($1) * Double($1) }.squareRoot()
        guard length > 0 else {
            throw NetRunnerError.invalidOption(name: "embedding", reason: "\(what) is all zeros: it has no direction")
        }
        return values.map { Float(Double($0) / length) }
    }

    /// Whether a match ranks above another: the more similar, a number above anything that is
    /// not one (which JSON writes `null`), then the lower position.
    static func ranksAbove(_ a: (index: Int, similarity: Float), _ b: (index: Int, similarity: Float)) -> Bool {
        if a.similarity.isFinite != b.similarity.isFinite { return a.similarity.isFinite }
        if a.similarity.isFinite, a.similarity != b.similarity { return a.similarity > b.similarity }
        return a.index < b.index
    }

    /// How far a stored embedding's squared length may be from 1 (a `Float` unit vector of
    /// 65,536 values is within 1e-5): ``read(from:)`` refuses a file holding one further.
    public static let unitTolerance: Float = 1e-3

    /// Why row `row` of a file's embeddings is not a unit vector, or `nil` when it is.
    private static func notUnit(_ vectors: UnsafeBufferPointer<Float>, row: Int, dimension: Int) -> String? {
        let values = UnsafeBufferPointer(rebasing: vectors[row * dimension..<(row + 1) * dimension])
        let squared = DotProducts.of(values, with: vectors, rows: row..<(row + 1), dimension: dimension).first ?? .nan
        guard !(abs(squared - 1) <= unitTolerance) else { return nil }
        if !values.allSatisfy(\.isFinite) { return "holds a value that is not a number" }
        if values.allSatisfy({ $0 == 0 }) { return "is all zeros" }
        let length = values.reduce(Double(0)) { $0 + Double($1) * Double($1) }.squareRoot()
        return "has a length of \(length), not 1 (an index holds unit vectors)"
    }

    /// Rows split into about four chunks per core.
    private static func chunks(count: Int) -> [Range<Int>] {
        let pieces = max(1, min(count, 4 * ProcessInfo.processInfo.activeProcessorCount))
        let size = (count + pieces - 1) / pieces
        return stride(from: 0, to: count, by: size).map { $0..<min($0 + size, count) }
    }
}

/// Floats read by several threads at once, none writing: safe to share.
private struct ReadOnly: @unchecked Sendable {
    let values: UnsafeBufferPointer<Float>

    init(_ values: UnsafeBufferPointer<Float>) {
        self.values = values
    }
}

/// The `k` largest similarities seen, kept sorted (k is small: a linear insert).
private struct TopK {
    let k: Int
    var items: [(index: Int, similarity: Float)] = []

    init(k: Int) {
        self.k = k
        items.reserveCapacity(k + 1)
    }

    mutating func insert(_ index: Int, _ similarity: Float) {
        let item = (index: index, similarity: similarity)
        if items.count == k, let last = items.last, !EmbeddingIndex.ranksAbove(item, last) { return }
        var position = items.count
        while position > 0, EmbeddingIndex.ranksAbove(item, items[position - 1]) { position -= 1 }
        items.insert(item, at: position)
        if items.count > k { items.removeLast() }
    }
}

/// Reads a byte buffer from the front, every read checked against what is left.
private struct ByteReader {
    let data: Data
    var offset = 0

    var remaining: Int { data.count - offset }

    mutating func take(_ count: Int) -> Data? {
        guard count >= 0, count <= remaining else { return nil }
        defer { offset += count }
        let start = data.startIndex + offset
        return data[start..<start + count]
    }

    mutating func integer<T: FixedWidthInteger>(_ type: T.Type) -> T? {
        guard let bytes = take(MemoryLayout<T>.size) else { return nil }
        return bytes.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(as: T.self)) }
    }

    /// A `UInt32`-length-prefixed UTF-8 string of at most 64 KiB.
    mutating func text() -> String? {
        guard let length = integer(UInt32.self), length <= 65_536, let bytes = take(Int(length)) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }
}
