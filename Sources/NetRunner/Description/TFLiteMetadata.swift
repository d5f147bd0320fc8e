public import FoundationEssentials
import NetRunnerFlatBuffers

/// The TFLite metadata a model carries (the `TFLITE_METADATA` buffer, schema `M001`), as the
/// Task Library's and MediaPipe's models have it: names, licence, per-tensor normalisation,
/// score thresholds and the associated files (label lists) packed into the model.
///
///     if let metadata = try TFLiteMetadata(interpreter.modelMetadata() ?? Data(), source: path) {
///         print(metadata.name, metadata.inputs.first?.normalization ?? "none")
///     }
public struct TFLiteMetadata: Equatable, Hashable, Sendable {
    /// The model's name.
    public var name: String?
    /// The model's description.
    public var description: String?
    /// The model's version.
    public var version: String?
    /// The model's author.
    public var author: String?
    /// The model's licence.
    public var license: String?
    /// The smallest metadata parser version that understands every field.
    public var minParserVersion: String?
    /// The main subgraph's inputs, in the model's input order.
    public var inputs: [TensorMetadata]
    /// The main subgraph's outputs, in the model's output order.
    public var outputs: [TensorMetadata]
    /// Files associated with the whole model.
    public var associatedFiles: [AssociatedFile]

    /// What the metadata says about one tensor.
    public struct TensorMetadata: Equatable, Hashable, Sendable {
        /// The tensor's name in the metadata (for detectors: `location`, `category`, ...).
        public var name: String?
        /// Its description.
        public var description: String?
        /// What the tensor holds.
        public var content: Content
        /// `(x - mean) / std` per channel, for inputs.
        public var normalization: Normalization?
        /// A recommended score threshold, for outputs.
        public var scoreThreshold: Float?
        /// Score calibration options (`ScoreCalibrationOptions`): the transform and the default
        /// score; the parameters are in the associated `TENSOR_AXIS_SCORE_CALIBRATION` file.
        public var scoreCalibration: ScoreCalibrationOptions?
        /// The tensor's value range (stats), per channel.
        public var minimum: [Float]
        /// The tensor's value range (stats), per channel.
        public var maximum: [Float]
        /// Files associated with this tensor (labels).
        public var associatedFiles: [AssociatedFile]

        /// The labels file of this tensor in the given locale (the first without a locale
        /// otherwise), of type `TENSOR_AXIS_LABELS` (classifiers) or `TENSOR_VALUE_LABELS`
        /// (detectors).
        ///
        /// - Parameter locale: The preferred locale, such as `en`.
        /// - Returns: The file, if any.
        public func labelsFile(locale: String? = nil) -> AssociatedFile? {
            let labels = associatedFiles.filter { $0.type == .tensorAxisLabels || $0.type == .tensorValueLabels }
            return labels.first { locale != nil && $0.locale == locale } ?? labels.first
        }

        /// Creates tensor metadata.
        ///
        /// - Parameters:
        ///   - name: The tensor's name.
        ///   - description: Its description.
        ///   - content: What it holds.
        ///   - normalization: Its normalisation, for inputs.
        ///   - scoreThreshold: A recommended score threshold.
        ///   - minimum: The minimum of its values, per channel.
        ///   - maximum: The maximum of its values, per channel.
        ///   - associatedFiles: Its associated files.
        public init(
            name: String? = nil, description: String? = nil, content: Content = .unknown,
            normalization: Normalization? = nil, scoreThreshold: Float? = nil,
            minimum: [Float] = [], maximum: [Float] = [], associatedFiles: [AssociatedFile] = []
        ) {
            self.name = name
            self.description = description
            self.content = content
            self.normalization = normalization
            self.scoreThreshold = scoreThreshold
            self.minimum = minimum
            self.maximum = maximum
            self.associatedFiles = associatedFiles
        }
    }

    /// ScoreCalibrationOptions.
    public struct ScoreCalibrationOptions: Equatable, Hashable, Sendable {
        /// The transform before the sigmoid.
        public var transformation: ScoreCalibration.Transformation
        /// The score of uncalibrated classes.
        public var defaultScore: Float
    }

    /// NormalizationOptions: `(x - mean) / std`; one value applies to every channel.
    public struct Normalization: Equatable, Hashable, Sendable {
        /// The mean of each channel (or one for all).
        public var mean: [Float]
        /// The standard deviation of each channel (or one for all).
        public var std: [Float]
    }

    /// What a tensor holds.
    public enum Content: Equatable, Hashable, Sendable {
        /// Not stated.
        case unknown
        /// Generic features.
        case feature
        /// An image, in a colour space (`RGB`, `GRAYSCALE`, `UNKNOWN`).
        case image(colorSpace: String)
        /// Bounding boxes: coordinate order (`index`), type and coordinate type.
        case boundingBox(index: [Int], type: String, coordinates: String)
    }

    /// A file packed into the model (in the zip appended to it).
    public struct AssociatedFile: Equatable, Hashable, Sendable {
        /// The file's kind.
        public enum Kind: Int, Equatable, Hashable, Sendable {
            /// Unknown.
            case unknown = 0
            /// A description.
            case descriptions = 1
            /// Labels of an output axis (classifiers).
            case tensorAxisLabels = 2
            /// Labels of output values (detectors' classes).
            case tensorValueLabels = 3
            /// Score calibration parameters.
            case tensorAxisScoreCalibration = 4
            /// A vocabulary.
            case vocabulary = 5
        }

        /// The file's name in the zip.
        public var name: String
        /// Its description.
        public var description: String?
        /// Its kind.
        public var type: Kind
        /// Its locale (`en`), if any.
        public var locale: String?
    }
}

extension TFLiteMetadata {
    // Field numbers from the metadata schema (metadata_schema.fbs, file identifier M001).
    private enum Model {
        static let name = 0, description = 1, version = 2, subgraphs = 3, author = 4, license = 5, files = 6,
            minParser = 7
    }
    private enum Subgraph { static let inputs = 2, outputs = 3 }
    private enum Tensor { static let name = 0, description = 1, content = 3, processUnits = 4, stats = 5, files = 6 }
    private enum ContentField { static let type = 0, properties = 1 }
    private enum ProcessUnit { static let type = 0, options = 1 }
    private enum File { static let name = 0, description = 1, type = 2, locale = 3 }

    /// Parses a `TFLITE_METADATA` buffer.
    ///
    /// - Parameters:
    ///   - data: The buffer (``Interpreter/modelMetadata(named:)``).
    ///   - source: The model's name, for errors.
    /// - Throws: ``ModelBundleError/invalidMetadata(file:reason:)`` for a buffer that is not
    ///   metadata or whose offsets lead outside it.
    public init(_ data: Data, source: String) throws(ModelBundleError) {
        let parsed: Result<TFLiteMetadata, ModelBundleError> = data.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress, bytes.count >= 8 else {
                return .failure(.invalidMetadata(file: source, reason: "the metadata buffer is too small"))
            }
            guard Array(bytes[4..<8]) == Array("M001".utf8) else {
                return .failure(.invalidMetadata(file: source, reason: "the metadata buffer has no M001 identifier"))
            }
            let buffer = FlatBuffer(base: base, count: bytes.count)
            guard let root = buffer.root else {
                return .failure(.invalidMetadata(file: source, reason: "the root table is out of range"))
            }
            return Result { () throws(ModelBundleError) in try Self.read(root, source: source) }
        }
        self = try parsed.get()
    }

    private static func read(_ root: FlatBuffer.Table, source: String) throws(ModelBundleError) -> TFLiteMetadata {
        func invalid(_ what: String) -> ModelBundleError {
            .invalidMetadata(file: source, reason: "\(what) is out of range")
        }
        func string(_ table: FlatBuffer.Table, _ field: Int, _ what: String) throws(ModelBundleError) -> String? {
            switch table.string(field) {
            case .absent: return nil
            case .invalid: throw invalid(what)
            case .value(let text): return text
            }
        }
        func files(_ table: FlatBuffer.Table, _ field: Int, _ what: String) throws(ModelBundleError) -> [AssociatedFile]
        {
            switch table.tables(field, limit: 1024) {
            case .absent: return []
            case .invalid: throw invalid(what)
            case .value(let entries):
                var result: [AssociatedFile] = []
                for (index, entry) in entries.enumerated() {
                    guard let name = try string(entry, File.name, "\(what)[\(index)].name") else { continue }
                    let type = entry.u8(File.type).flatMap { AssociatedFile.Kind(rawValue: Int(Int8(bitPattern: $0))) }
                    result.append(
                        AssociatedFile(
                            name: name,
                            description: try string(entry, File.description, "\(what)[\(index)].description"),
                            type: type ?? .unknown, locale: try string(entry, File.locale, "\(what)[\(index)].locale")))
                }
                return result
            }
        }
        func tensors(_ table: FlatBuffer.Table, _ field: Int, _ what: String) throws(ModelBundleError)
            -> [TensorMetadata]
        {
            switch table.tables(field, limit: 4096) {
            case .absent: return []
            case .invalid: throw invalid(what)
            case .value(let entries):
                var result: [TensorMetadata] = []
                for (index, entry) in entries.enumerated() {
                    let path = "\(what)[\(index)]"
                    var tensor = TensorMetadata(
                        name: try string(entry, Tensor.name, path + ".name"),
                        description: try string(entry, Tensor.description, path + ".description"),
                        associatedFiles: try files(entry, Tensor.files, path + ".associated_files"))
                    if case .value(let content) = entry.table(Tensor.content) {
                        tensor.content = try self.content(content, path: path, invalid: invalid)
                    } else if case .invalid = entry.table(Tensor.content) {
                        throw invalid(path + ".content")
                    }
                    if case .value(let units) = entry.tables(Tensor.processUnits, limit: 64) {
                        for unit in units {
                            guard case .value(let options) = unit.table(ProcessUnit.options) else { continue }
                            switch unit.u8(ProcessUnit.type) ?? 0 {
                            case 1:  // NormalizationOptions { mean: [float], std: [float] }
                                let mean = options.floats(0).value ?? []
                                let std = options.floats(1).value ?? []
                                guard !mean.isEmpty, !std.isEmpty, std.allSatisfy({ $0 != 0 && $0.isFinite }),
                                    mean.allSatisfy(\.isFinite)
                                else {
                                    throw .invalidMetadata(
                                        file: source, reason: "\(path) has unusable normalization options")
                                }
                                tensor.normalization = Normalization(mean: mean, std: std)
                            case 2:  // ScoreCalibrationOptions { score_transformation: byte, default_score: float }
                                let kinds: [ScoreCalibration.Transformation] = [.identity, .log, .inverseLogistic]
                                let kind = Int(options.u8(0) ?? 0)
                                guard kind < kinds.count, let score = options.float(1), score.isFinite else {
                                    throw .invalidMetadata(
                                        file: source, reason: "\(path) has unusable score calibration options")
                                }
                                tensor.scoreCalibration = ScoreCalibrationOptions(
                                    transformation: kinds[kind], defaultScore: score)
                            case 3:  // ScoreThresholdingOptions { global_score_threshold: float }
                                tensor.scoreThreshold = options.float(0)
                            default:
                                break
                            }
                        }
                    } else if case .invalid = entry.tables(Tensor.processUnits, limit: 64) {
                        throw invalid(path + ".process_units")
                    }
                    if case .value(let stats) = entry.table(Tensor.stats) {
                        tensor.maximum = stats.floats(0).value ?? []
                        tensor.minimum = stats.floats(1).value ?? []
                    }
                    result.append(tensor)
                }
                return result
            }
        }

        var metadata = TFLiteMetadata(
            name: try string(root, Model.name, "name"), description: try string(root, Model.description, "description"),
            version: try string(root, Model.version, "version"), author: try string(root, Model.author, "author"),
            license: try string(root, Model.license, "license"),
            minParserVersion: try string(root, Model.minParser, "min_parser_version"), inputs: [], outputs: [],
            associatedFiles: try files(root, Model.files, "associated_files"))
        switch root.tables(Model.subgraphs, limit: 64) {
        case .absent: break
        case .invalid: throw invalid("subgraph_metadata")
        case .value(let subgraphs):
            if let main = subgraphs.first {
                metadata.inputs = try tensors(main, Subgraph.inputs, "subgraph_metadata[0].input_tensor_metadata")
                metadata.outputs = try tensors(main, Subgraph.outputs, "subgraph_metadata[0].output_tensor_metadata")
            }
        }
        return metadata
    }

    private static func content(
        _ table: FlatBuffer.Table, path: String, invalid: (String) -> ModelBundleError
    ) throws(ModelBundleError) -> Content {
        let type = table.u8(ContentField.type) ?? 0
        guard case .value(let properties) = table.table(ContentField.properties) else {
            return type == 1 ? .feature : .unknown
        }
        switch type {
        case 1:
            return .feature
        case 2:  // ImageProperties { color_space: byte, default_size }
            let spaces = ["UNKNOWN", "RGB", "GRAYSCALE"]
            let space = Int(properties.u8(0) ?? 0)
            return .image(colorSpace: space < spaces.count ? spaces[space] : "UNKNOWN")
        case 3:  // BoundingBoxProperties { index: [uint], type: byte, coordinate_type: byte }
            let count = properties.vectorCount(0, elementSize: 4).value ?? 0
            let index = (0..<min(count, 8)).compactMap { properties.int32Element(0, $0).map(Int.init) }
            let types = ["UNKNOWN", "BOUNDARIES", "UPPER_LEFT", "CENTER"]
            let kind = Int(properties.u8(1) ?? 0)
            let coordinates = (properties.u8(2) ?? 0) == 1 ? "PIXEL" : "RATIO"
            return .boundingBox(
                index: index, type: kind < types.count ? types[kind] : "UNKNOWN", coordinates: coordinates)
        default:
            return .unknown
        }
    }
}

extension TFLiteMetadata {
    /// The metadata buffer stored in a model's flatbuffer under `name` (`Model.metadata`
    /// names a `Model.buffers` entry), read without loading the model; `nil` when there is none
    /// or the offsets are out of range.
    ///
    /// - Parameters:
    ///   - model: The bytes of a `.tflite` file.
    ///   - name: The metadata entry's name.
    /// - Returns: A copy of the buffer's bytes.
    public static func buffer(inModel model: Data, named name: String = "TFLITE_METADATA") -> Data? {
        model.withUnsafeBytes { bytes -> Data? in
            guard let base = bytes.baseAddress, let root = FlatBuffer(base: base, count: bytes.count).root,
                case .value(let entries) = root.tables(6, limit: 1024),  // Model.metadata: [Metadata]
                let entry = entries.first(where: { $0.string(0).value == name }),
                let index = entry.u32(1).map(Int.init),  // Metadata.buffer
                case .value(let buffers) = root.tables(4, limit: 1 << 20),  // Model.buffers: [Buffer]
                index < buffers.count, case .value(let range) = buffers[index].byteRange(0),  // Buffer.data
                !range.isEmpty
            else { return nil }
            return Data(bytes[range])
        }
    }
}
