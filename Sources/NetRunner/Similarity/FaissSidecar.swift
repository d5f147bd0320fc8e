import FoundationEssentials
import NetRunnerImage
import NetRunnerSupport

/// What a FAISS index file does not hold, in a small JSON file beside it (`photos.faiss.json`
/// for `photos.faiss`): each vector's photo (its id is its position in ``paths``), the model and
/// its preprocessing, how the vectors were made and how the index was built.
///
/// docs/embeddings.md#faiss-indexes describes every field.
public struct FaissSidecar: Codable, Sendable, Equatable {
    /// ``format``'s value.
    public static let formatName = "netrunner-faiss-sidecar"
    /// The ``version`` written and read.
    public static let currentVersion = 1

    /// The model's preprocessing, as a query's photo must be prepared.
    public struct Preprocessing: Codable, Sendable, Equatable {
        /// The input's width in pixels.
        public var width: Int
        /// The input's height in pixels.
        public var height: Int
        /// 3 for colour, 1 for grayscale.
        public var channels: Int
        /// `centerSquare`, `stretch` or `letterbox`.
        public var cropping: String
        /// `rgb` or `bgr`.
        public var channelOrder: String
        /// `(pixel - mean[c]) / std[c]`; `nil` for raw bytes.
        public var mean: [Float]?
        /// See ``mean``.
        public var std: [Float]?
        /// The resampling filter.
        public var resize: String

        enum CodingKeys: String, CodingKey {
            case width, height, channels, cropping, mean, std, resize
            case channelOrder = "channel_order"
        }

        /// The fields of a model's preprocessing.
        ///
        /// - Parameter preprocessing: The model's.
        public init(_ preprocessing: ImagePreprocessing) {
            width = preprocessing.size.width
            height = preprocessing.size.height
            channels = preprocessing.channels
            cropping = preprocessing.cropping.rawValue
            channelOrder = preprocessing.channelOrder.rawValue
            mean = preprocessing.normalization?.mean
            std = preprocessing.normalization?.std
            resize = preprocessing.resizeMethod.rawValue
        }
    }

    /// Always ``formatName``.
    public var format = Self.formatName
    /// Always ``currentVersion``.
    public var version = Self.currentVersion
    /// The FAISS that wrote the index ("1.7.3").
    public var faissVersion: String
    /// The factory string the index was made from ("HNSW32", "IVF1024,PQ64").
    public var factory: String
    /// `inner_product`: on unit vectors, the cosine similarity.
    public var metric: String
    /// Whether the vectors were L2-normalised before they were added (always, so that the inner
    /// product is the cosine similarity); a query must be normalised too.
    public var normalized: Bool
    /// The number of values of each vector.
    public var dimension: Int
    /// The number of vectors, as many as ``paths``.
    public var count: Int
    /// The model the embeddings come from: a catalog id, `hub:NAME` or an absolute path.
    public var model: String
    /// The model file's SHA-256 (lowercase hex), when it could be loaded at indexing time.
    public var modelSHA256: String?
    /// The model's preprocessing, when it could be loaded at indexing time.
    public var preprocessing: Preprocessing?
    /// The search parameters set before writing, which the index file keeps ("efSearch=64").
    public var searchParameters: String?
    /// The recall at 10 measured with ``searchParameters`` against exact search, on stored
    /// vectors as queries (each one's own vector left out); `nil` for an exact index.
    public var recallAt10: Double?
    /// The vectors used to train the index (IVF, PQ), 0 for none.
    public var trainingCount: Int
    /// Each vector's photo, in id order.
    public var paths: [String]
    /// The SHA-256 of the index file this sidecar was written with, so that a reader can tell
    /// a pair of one writing from an index file replaced beside an older sidecar (a server
    /// reloading while `similar index` writes); `nil` in sidecars written before it was kept.
    public var indexSHA256: String? = nil

    enum CodingKeys: String, CodingKey {
        case format, version, factory, metric, normalized, dimension, count, model, preprocessing, paths
        case faissVersion = "faiss_version"
        case modelSHA256 = "model_sha256"
        case searchParameters = "search_parameters"
        case recallAt10 = "recall_at_10"
        case trainingCount = "training_count"
        case indexSHA256 = "index_sha256"
    }

    /// The sidecar's file for an index file: its path with `.json` added.
    ///
    /// - Parameter index: The index file.
    /// - Returns: The sidecar's path.
    public static func path(for index: String) -> String { index + ".json" }

    /// The largest sidecar read (about 20 million paths of 100 bytes).
    public static let maximumSize = 2 << 30

    /// Writes the sidecar, atomically.
    ///
    /// - Parameter path: The sidecar's file.
    /// - Throws: `FileError` when it cannot be written.
    public func write(to path: String) throws {
        try FileIO.writeAtomically(try JSONCoding.encoder(pretty: true).encode(self), to: path)
    }

    /// Reads a sidecar, checking its format and that its counts agree.
    ///
    /// - Parameter path: The sidecar's file.
    /// - Returns: The sidecar.
    /// - Throws: `NetRunnerError.invalidOption` naming the file for one that is not a sidecar
    ///   or does not agree with itself; `FileError` when it cannot be read.
    public static func read(from path: String) throws -> FaissSidecar {
        func bad(_ reason: String) -> NetRunnerError {
            .invalidOption(name: "index", reason: "\(path) is not a NetRunner FAISS sidecar: \(reason)")
        }
        let data = try FileIO.contents(of: path, maximumSize: maximumSize)
        let sidecar: FaissSidecar
        do {
            sidecar = try JSONDecoder().decode(FaissSidecar.self, from: data)
        } catch {
            throw bad("\(error)")
        }
        guard sidecar.format == formatName, sidecar.version == currentVersion else {
            throw bad("format \(sidecar.format) version \(sidecar.version), not \(formatName) \(currentVersion)")
        }
        guard sidecar.metric == "inner_product", sidecar.normalized else {
            throw bad(
                "metric \(sidecar.metric) on vectors normalised: \(sidecar.normalized) (NetRunner writes "
                    + "inner_product on normalised vectors)")
        }
        guard (1...EmbeddingIndex.maximumDimension).contains(sidecar.dimension) else {
            throw bad("a dimension of \(sidecar.dimension)")
        }
        guard sidecar.count == sidecar.paths.count else {
            throw bad("it declares \(sidecar.count) vectors and lists \(sidecar.paths.count) paths")
        }
        return sidecar
    }
}
