import NetRunnerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Opens a similarity index by its first bytes: `NRINDEX1` (``EmbeddingIndex``) or a FAISS
/// index with its sidecar (``FaissEmbeddingIndex``, Linux only for now).
public enum SimilarityIndexFile {
    /// The kinds of file.
    public enum Kind: Sendable, Equatable {
        /// NetRunner's own exact index (docs/embeddings.md#the-index-file).
        case netRunner
        /// A FAISS index (every FAISS index file starts with a four-letter code beginning
        /// with `I`: `IxFI` Flat, `IHNf` HNSW, `IwPQ` IVF-PQ...).
        case faiss
    }

    /// The kind of an index file, from its first bytes.
    ///
    /// - Parameter path: The file.
    /// - Returns: Its kind.
    /// - Throws: `FileError` when it cannot be read; `NetRunnerError.invalidOption` naming the
    ///   file for one that is neither kind.
    public static func kind(of path: String) throws -> Kind {
        let (descriptor, _) = try FileIO.openRegularFile(path)
        defer { close(descriptor) }
        var head = [UInt8](repeating: 0, count: 8)
        #if canImport(Glibc)
            let got = head.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, 8) }
        #else
            let got = head.withUnsafeMutableBytes { Darwin.read(descriptor, $0.baseAddress, 8) }
        #endif
        if got == 8, head == Array("NRINDEX1".utf8) { return .netRunner }
        if got >= 4, head[0] == UInt8(ascii: "I"), head[1...3].allSatisfy({ (0x21...0x7e).contains($0) }) {
            return .faiss
        }
        throw NetRunnerError.invalidOption(
            name: "index",
            reason: "\(path) is neither a NetRunner similarity index (NRINDEX1) nor a FAISS index: "
                + "make one with `netrunner similar index`")
    }

    /// Whether this build has FAISS (Linux, for now).
    public static var hasFaiss: Bool {
        #if canImport(CFaiss)
            true
        #else
            false
        #endif
    }

    /// The threads FAISS searches and trains on, from now on (nothing without FAISS).
    ///
    /// - Parameter threads: 1 to 256.
    /// - Throws: ``FaissError`` for another number.
    public static func setFaissThreads(_ threads: Int) throws {
        #if canImport(CFaiss)
            try FaissIndex.setThreads(threads)
        #endif
    }

    /// Writes an exact index's embeddings as a FAISS index and its sidecar
    /// (``FaissEmbeddingIndex/build(from:factory:modelSHA256:preprocessing:recallTarget:seed:)``).
    ///
    /// - Parameters:
    ///   - exact: The embeddings and their paths.
    ///   - factory: FAISS's description (`Flat`, `HNSW32`, `IVF1024,PQ64`).
    ///   - path: The index file; the sidecar goes beside it (``FaissSidecar/path(for:)``).
    ///   - modelSHA256: The model file's SHA-256, for the sidecar.
    ///   - preprocessing: The model's preprocessing, for the sidecar.
    /// - Returns: The sidecar written.
    /// - Throws: What the build and the writes throw; without FAISS, `NetRunnerError.invalidOption`.
    public static func writeFaiss(
        _ exact: EmbeddingIndex, factory: String, to path: String, modelSHA256: String? = nil,
        preprocessing: FaissSidecar.Preprocessing? = nil
    ) throws -> FaissSidecar {
        #if canImport(CFaiss)
            let index = try FaissEmbeddingIndex.build(
                from: exact, factory: factory, modelSHA256: modelSHA256, preprocessing: preprocessing)
            try index.write(to: path)
            return index.sidecar
        #else
            throw NetRunnerError.invalidOption(
                name: "index-type", reason: "this build has no FAISS (Linux only for now): leave --index-type out")
        #endif
    }

    /// Reads an index of either kind.
    ///
    /// - Parameters:
    ///   - path: The file (a FAISS index's sidecar beside it: ``FaissSidecar/path(for:)``).
    ///   - verifying: Whether a FAISS file is checked against the digest its sidecar names
    ///     (``FaissEmbeddingIndex/read(from:verifying:)``): a server does, since the files may be
    ///     being written again.
    /// - Returns: The index.
    /// - Throws: What ``EmbeddingIndex/read(from:)`` or ``FaissEmbeddingIndex/read(from:verifying:)``
    ///   throws; on a system without FAISS, `NetRunnerError.invalidOption` for a FAISS index.
    public static func read(from path: String, verifying: Bool = false) throws -> any SimilarityIndex & Sendable {
        switch try kind(of: path) {
        case .netRunner:
            return try EmbeddingIndex.read(from: path)
        case .faiss:
            #if canImport(CFaiss)
                return try FaissEmbeddingIndex.read(from: path, verifying: verifying)
            #else
                throw NetRunnerError.invalidOption(
                    name: "index",
                    reason: "\(path) is a FAISS index, and this build has no FAISS (Linux only for now)")
            #endif
        }
    }
}
