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
/// embeddings stored L2-normalised, so a dot product), in C with AVX2, on every core. `docs/similar.md` gives the measured build and query times and memory at 10,000,
/// 100,000 and 1,000,000 embeddings, and what to use beyond.
public struct EmbeddingIndex: Sendable {
    /// The largest number of values in one embedding an index file may declare.
    public static let maximumDimension = 65_536
    /// The largest number of embeddings an index file may declare.
    public static let maximumCount = 50_000_000

    /// The number of values in each embedding.
    public let dimension: Int
    /// The model the embeddings come from (a catalog id, or a file's name), as the index
    /// records it: a query must be embedded by the same model.
    public let model: String
    /// Each embedding's photo, in the order added.
    public private(set) var paths: [String] = []
    /// The embeddings, L2-normalised, one after another (`count * dimension` values).
    private var vectors: [Float] = []

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
    ///   that are not finite or all zero.
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
    /// - Returns: The matches.
    /// - Throws: ``NetRunnerError/invalidOption(name:reason:)`` for a query of another length.
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
        merged.sort { $0.similarity != $1.similarity ? $0.similarity > $1.similarity : $0.index < $1.index }
        return merged.prefix(wanted).map { Match(index: $0.index, path: paths[$0.index], similarity: $0.similarity) }
    }

    /// Groups of photos whose embeddings are at least `threshold` alike, each group joined
    /// through pairs above it (a photo in two pairs joins them), largest group first.
    ///
    /// Every pair is compared: `count * (count - 1) / 2` dot products, on every core (3,000
    /// photos: about 4.5 million, a second or two).
    ///
    /// - Parameter threshold: The least cosine similarity of a pair (0.98: near-duplicates).
    /// - Returns: The groups, each sorted by position, with the pairs' similarities.
    public func duplicateGroups(threshold: Float) -> [(members: [Int], pairs: [(Int, Int, Float)])] {
        let pairs = Mutex<[(Int, Int, Float)]>([])
        let rows = count
        vectors.withUnsafeBufferPointer { allValues in
            let shared = ReadOnly(allValues)
            // Rows interleaved across the workers: row i compares with the rows after it.
            let workers = max(1, min(ProcessInfo.processInfo.activeProcessorCount, rows))
            DispatchQueue.concurrentPerform(iterations: workers) { worker in
                let all = shared.values
                var found: [(Int, Int, Float)] = []
                var row = worker
                while row < rows {
                    let q = UnsafeBufferPointer(rebasing: all[row * dimension..<(row + 1) * dimension])
                    let similarities = DotProducts.of(q, with: all, rows: (row + 1)..<rows, dimension: dimension)
                    for (offset, similarity) in similarities.enumerated() where similarity >= threshold {
                        found.append((row, row + 1 + offset, similarity))
                    }
                    row += workers
                }
                pairs.withLock { $0 += found }
            }
        }
        let found = pairs.withLock { $0 }.sorted { ($0.0, $0.1) < ($1.0, $1.1) }
        // Union-find over the pairs.
        var parent = Array(0..<rows)
        func root(_ item: Int) -> Int {
            var item = item
            while parent[item] != item {
                parent[item] = parent[parent[item]]
                item = parent[item]
            }
            return item
        }
        for (a, b, _) in found {
            let (ra, rb) = (root(a), root(b))
            if ra != rb { parent[max(ra, rb)] = min(ra, rb) }
        }
        var groups: [Int: [Int]] = [:]
        for (a, b, _) in found {
            groups[root(a), default: []] += [a, b]
        }
        return groups.values.map { members -> (members: [Int], pairs: [(Int, Int, Float)]) in
            let members = Array(Set(members)).sorted()
            let first = members.first ?? 0
            return (members, found.filter { root($0.0) == root(first) })
        }
        .sorted {
            $0.members.count != $1.members.count ? $0.members.count > $1.members.count : $0.members[0] < $1.members[0]
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
    ///   naming the file for one that is not an index or is cut short.
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
            guard index.vectors.allSatisfy(\.isFinite) else {
                throw bad("an embedding holds a value that is not a number")
            }
            index.paths.reserveCapacity(count)
            for _ in 0..<count {
                guard let text = reader.text() else { throw bad("its paths are cut short") }
                index.paths.append(text)
            }
            guard reader.remaining == 0 else { throw bad("\(reader.remaining) bytes follow its last path") }
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
        let norm = values.reduce(Float(0)) { $0 + $1 * $1 }.squareRoot()
        guard norm > 0, norm.isFinite else {
            throw NetRunnerError.invalidOption(
                name: "embedding",
                reason: "\(what) "
                    + (norm > 0 ? "is too long to measure (its length overflows)" : "is all zeros: it has no direction")
            )
        }
        return ImageEmbedder.l2Normalized(values)
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
        if items.count == k, let last = items.last, similarity <= last.similarity { return }
        var position = items.count
        while position > 0, items[position - 1].similarity < similarity { position -= 1 }
        items.insert((index, similarity), at: position)
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
