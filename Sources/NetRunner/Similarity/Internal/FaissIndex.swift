#if canImport(CFaiss)
    internal import CFaiss
    import FoundationEssentials
    import NetRunnerSupport

    /// A FAISS index (`faiss::Index`) through our C API (Sources/CFaiss).
    ///
    /// Made from a factory string, trained, filled, searched, written in FAISS's own format and
    /// read back. Linux only for now (Debian's libfaiss-dev).
    ///
    ///     let index = try FaissIndex(factory: "HNSW32", dimension: 1024)
    ///     try index.add(vectors)                       // count x 1024 floats
    ///     let nearest = try index.search(query, k: 10) // one list per query
    ///     try index.write(to: "photos.faiss")          // faiss.read_index reads it
    ///
    /// Not for several threads at once: FAISS's searches are, but training and adding are not.
    public final class FaissIndex {
        /// How vectors are compared.
        public enum Metric: String, Sendable, Codable {
            /// The dot product (cosine similarity on unit vectors), larger nearer.
            case innerProduct = "inner_product"
            /// The squared Euclidean distance, smaller nearer.
            case l2
        }

        /// One answer of a search.
        public struct Neighbour: Sendable, Equatable {
            /// The vector's id: its position in the order added.
            public var id: Int
            /// Its inner product with the query, or squared distance from it.
            public var distance: Float
        }

        /// The largest dimension NetRunner makes or reads.
        public static let maximumDimension = EmbeddingIndex.maximumDimension
        /// The most vectors NetRunner stores in, or reads from, one index.
        public static let maximumCount = EmbeddingIndex.maximumCount
        /// The largest `k` of a search.
        public static let maximumK = 10_000
        /// The most values one call hands over (vectors times dimension; 8 GiB of floats).
        public static let maximumValues = 1 << 31

        private let handle: OpaquePointer

        private init(handle: OpaquePointer) {
            self.handle = handle
        }

        deinit { nr_faiss_free(handle) }

        /// A new, empty index from a FAISS factory string.
        ///
        /// - Parameters:
        ///   - factory: FAISS's description (`"Flat"`, `"HNSW32"`, `"IVF1024,PQ64"`).
        ///   - dimension: The number of values of each vector.
        ///   - metric: How vectors are compared.
        /// - Throws: ``FaissError`` for a dimension outside 1...``maximumDimension`` or a factory
        ///   string FAISS refuses (its message).
        public init(factory: String, dimension: Int, metric: Metric = .innerProduct) throws {
            let operation = "make the index \"\(factory)\""
            let dimension = try Self.checked(dimension, "the dimension", 1...Self.maximumDimension, operation)
            guard !factory.isEmpty, factory.utf8.count <= 256, !factory.utf8.contains(0) else {
                throw FaissError(operation: operation, message: "a factory string is 1 to 256 characters")
            }
            var made: OpaquePointer?
            try Self.call(operation) {
                nr_faiss_factory(Int32(dimension), factory, metric == .innerProduct ? 1 : 0, &made, $0, $1)
            }
            guard let made else { throw FaissError(operation: operation, message: "FAISS answered no index") }
            handle = made
        }

        /// Reads an index file FAISS wrote (`faiss.write_index`, ``write(to:)``).
        ///
        /// FAISS allocates what the file declares: read files you trust, as you would a model.
        ///
        /// - Parameter path: The file.
        /// - Returns: The index.
        /// - Throws: ``FaissError`` naming the file: one that is not a FAISS index, is cut short,
        ///   or declares more than ``maximumCount`` vectors or ``maximumDimension`` values.
        public static func read(from path: String) throws -> FaissIndex {
            let operation = "read \(path)"
            var read: OpaquePointer?
            try call(operation) { nr_faiss_read(path, &read, $0, $1) }
            guard let read else { throw FaissError(operation: operation, message: "FAISS answered no index") }
            let index = FaissIndex(handle: read)
            _ = try checked(Int(nr_faiss_ntotal(read)), "the number of vectors", 0...maximumCount, operation)
            _ = try checked(Int(nr_faiss_dimension(read)), "the dimension", 1...maximumDimension, operation)
            return index
        }

        /// The number of vectors stored.
        public var count: Int { Int(nr_faiss_ntotal(handle)) }

        /// The number of values of each vector.
        public var dimension: Int { Int(nr_faiss_dimension(handle)) }

        /// Whether the index needs no (more) training before vectors are added (Flat and HNSW
        /// never do; IVF and PQ until ``train(_:)``).
        public var isTrained: Bool { nr_faiss_is_trained(handle) != 0 }

        /// How the index compares vectors.
        public var metric: Metric { nr_faiss_metric_is_inner_product(handle) != 0 ? .innerProduct : .l2 }

        /// FAISS's version, as its headers gave it when NetRunner was built ("1.7.3").
        public static var version: String { String(cString: nr_faiss_version()) }

        /// The OpenMP threads FAISS uses for every later call, from any thread (FAISS searches a
        /// batch of queries, and trains, on that many threads).
        ///
        /// - Parameter threads: 1 to 256.
        /// - Throws: ``FaissError`` for another number.
        public static func setThreads(_ threads: Int) throws {
            nr_faiss_set_threads(Int32(try checked(threads, "the threads", 1...256, "use \(threads) threads")))
        }

        /// Trains the index (IVF's coarse centroids, PQ's codebooks) on vectors like those it will
        /// hold.
        ///
        /// - Parameter vectors: Vectors, one after another (a multiple of ``dimension`` values).
        /// - Throws: ``FaissError``: FAISS's message (too few vectors for the centroids asked).
        public func train(_ vectors: [Float]) throws {
            let rows = try rows(of: vectors, "train")
            try vectors.withUnsafeBufferPointer { values in
                try Self.call("train") { nr_faiss_train(handle, Int64(rows), values.baseAddress, $0, $1) }
            }
        }

        /// Adds vectors, their ids ``count`` onwards.
        ///
        /// - Parameter vectors: Vectors, one after another (a multiple of ``dimension`` values).
        /// - Throws: ``FaissError``: the index is not trained, or it would hold more than
        ///   ``maximumCount``.
        public func add(_ vectors: [Float]) throws {
            let rows = try rows(of: vectors, "add vectors")
            _ = try Self.checked(count + rows, "the number of vectors", 0...Self.maximumCount, "add vectors")
            try vectors.withUnsafeBufferPointer { values in
                try Self.call("add vectors") { nr_faiss_add(handle, Int64(rows), values.baseAddress, $0, $1) }
            }
        }

        /// The `k` nearest stored vectors of each query, nearest first (fewer where the index
        /// finds fewer: an IVF index probes only some lists).
        ///
        /// - Parameters:
        ///   - queries: Queries, one after another (a multiple of ``dimension`` values).
        ///   - k: How many of each, 1...``maximumK``.
        /// - Returns: One list per query.
        /// - Throws: ``FaissError`` for a `k` out of range or FAISS's message.
        public func search(_ queries: [Float], k: Int) throws -> [[Neighbour]] {
            let rows = try rows(of: queries, "search")
            let k = try Self.checked(k, "k", 1...Self.maximumK, "search")
            let values = try Self.checked(rows * k, "the answers (queries x k)", 0...Self.maximumValues, "search")
            var distances = [Float](repeating: 0, count: values)
            var labels = [Int64](repeating: -1, count: values)
            try queries.withUnsafeBufferPointer { query in
                try Self.call("search") {
                    nr_faiss_search(handle, Int64(rows), query.baseAddress, Int64(k), &distances, &labels, $0, $1)
                }
            }
            return (0..<rows).map { row in
                (row * k..<(row + 1) * k).compactMap { at in
                    labels[at] < 0 ? nil : Neighbour(id: Int(labels[at]), distance: distances[at])
                }
            }
        }

        /// Stored vectors, as FAISS holds them (exact for Flat and HNSW; PQ's decoded codes).
        ///
        /// - Parameter ids: Positions within 0..<``count``.
        /// - Returns: Their values, one vector after another.
        /// - Throws: ``FaissError`` for ids out of range, or an index that cannot reconstruct.
        public func vectors(_ ids: Range<Int>) throws -> [Float] {
            guard ids.lowerBound >= 0, ids.upperBound <= count else {
                throw FaissError(operation: "reconstruct vectors", message: "\(ids) is outside 0..<\(count)")
            }
            let values = try Self.checked(
                ids.count * dimension, "the values", 0...Self.maximumValues, "reconstruct vectors")
            var result = [Float](repeating: 0, count: values)
            guard !ids.isEmpty else { return result }
            try Self.call("reconstruct vectors") {
                nr_faiss_reconstruct(handle, Int64(ids.lowerBound), Int64(ids.count), &result, $0, $1)
            }
            return result
        }

        /// Sets search parameters, which FAISS keeps in the file (`"efSearch=128"` for HNSW,
        /// `"nprobe=16"` for IVF; several separated by commas).
        ///
        /// - Parameter parameters: FAISS's `ParameterSpace` text.
        /// - Throws: ``FaissError``: FAISS's message for a parameter the index has not.
        public func setParameters(_ parameters: String) throws {
            guard parameters.utf8.count <= 256, !parameters.utf8.contains(0) else {
                throw FaissError(operation: "set \(parameters.prefix(40))", message: "at most 256 characters")
            }
            try Self.call("set \(parameters)") { nr_faiss_set_parameters(handle, parameters, $0, $1) }
        }

        /// Writes the index in FAISS's format (what `faiss.read_index` reads), atomically: the
        /// old file or the whole new one.
        ///
        /// - Parameter path: The file.
        /// - Returns: The SHA-256 of the bytes written.
        /// - Throws: ``FaissError`` from FAISS, `FileError` when the file cannot be written.
        @discardableResult
        public func write(to path: String) throws -> String {
            var bytes: UnsafeMutablePointer<UInt8>?
            var size = 0
            try Self.call("write \(path)") { nr_faiss_serialize(handle, &bytes, &size, $0, $1) }
            defer { nr_faiss_free_bytes(bytes) }
            guard let bytes else { throw FaissError(operation: "write \(path)", message: "FAISS answered nothing") }
            let data = Data(bytesNoCopy: bytes, count: size, deallocator: .none)
            try FileIO.writeAtomically(data, to: path)
            return SHA256.hexDigest(of: data)
        }

        // MARK: - Checks

        /// The number of vectors in `values`, checked against the dimension and the limits.
        private func rows(of values: [Float], _ operation: String) throws -> Int {
            guard !values.isEmpty, values.count % dimension == 0 else {
                throw FaissError(
                    operation: operation,
                    message: "\(values.count) values are not a whole number of vectors of \(dimension)")
            }
            _ = try Self.checked(values.count, "the values", 1...Self.maximumValues, operation)
            return values.count / dimension
        }

        private static func checked(_ value: Int, _ name: String, _ range: ClosedRange<Int>, _ operation: String)
            throws -> Int
        {
            do {
                return try CheckedNumber.integer(value, name, in: range)
            } catch {
                throw FaissError(operation: operation, message: error.description)
            }
        }

        /// Runs a C call that writes FAISS's message into a buffer on failure.
        private static func call(_ operation: String, _ body: (UnsafeMutablePointer<CChar>, Int) -> Int32) throws {
            var buffer = [CChar](repeating: 0, count: 2048)
            let status = buffer.withUnsafeMutableBufferPointer { buffer in
                buffer.baseAddress.map { body($0, buffer.count) } ?? -1
            }
            guard status != 0 else { return }
            let message = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw FaissError(operation: operation, message: message)
        }
    }
#endif
