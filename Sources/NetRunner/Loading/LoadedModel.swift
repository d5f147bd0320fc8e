public import FoundationEssentials
import NetRunnerFlatBuffers
import NetRunnerSupport
import Synchronization
public import TensorFlowLite

/// A model read once, with everything that describes it: its bytes, its `model.json`, its
/// TFLite metadata and packed files, and its labels.
///
/// Every task (``ImageClassifier``, ``ObjectDetector``, ``Model``, ``ImageTask``) and every
/// command loads its model through this value, so a path means the same thing everywhere and
/// the model file is read once however many interpreters are made from it (one per thread):
///
///     let model = try LoadedModel(.path("photo-model.zip"))
///     let classifiers = try (0..<4).map { _ in try ImageClassifier(model: model) }
///
/// What describes the model, in order: labels the user gave (`labelsPath`), then the
/// description (`model.json` of a bundle, of a zipped bundle, or beside a `.tflite` that
/// carries no metadata of its own), then the model's TFLite metadata, then defaults. The same
/// order decides preprocessing (see ``ImagePreprocessing/init(input:inputIndex:model:requested:taskDefaults:)``).
///
/// - Note: A value type holding bytes: share it freely between threads. A zipped bundle's
///   temporary folder is removed once its files are read.
public struct LoadedModel: Sendable {
    /// The name errors and output give the model: the path the user gave, or the bundle's name.
    public let name: String
    /// The path of the model file itself (inside a bundle for bundles), or the name for a model
    /// held in memory; errors about the flatbuffer name it.
    public let modelFile: String
    /// The bytes of the `.tflite` model.
    public let modelData: Data
    /// The TensorIO / Net Runner description, if the model has one.
    public let description: ModelDescription?
    /// The model's TFLite metadata, if it carries any.
    public let metadata: TFLiteMetadata?
    /// The bundle folder the model was read from, if it came from one on disk.
    public let bundlePath: String?
    /// Where the description came from, for errors (`bundle/model.json`, `bundle.zip:model.json`).
    private let descriptionFile: String
    /// The SHA-256 of ``modelData``, computed once and shared by every copy of this value.
    public var sha256: String { digest.value(of: modelData) }
    private let digest = DigestMemo()

    /// Whether ``ModelGate`` checks the model in a child process before the first interpreter
    /// (``ModelTrust/checked``, the default) or trusts it.
    public var trust: ModelTrust = .checked

    /// The task type given to a model made here without a description (a classifier cut at
    /// its penultimate layer is an `image.embedding`), read where the description's type is.
    var assignedType: String?

    /// A labels text and the file it came from.
    struct LabelsFile: Sendable {
        var text: String
        var source: String
    }

    /// Labels given by the user (a labels file or a map), which win over everything else.
    private var givenLabels: Either?
    /// The description's labels files, by the name the description gives them.
    private let describedLabels: [String: LabelsFile]
    /// The files packed into the model (TFLite metadata's labels and calibration files).
    private let packedFiles: PackedFiles?

    private enum Either: Sendable {
        case file(LabelsFile)
        case map(LabelMap)
    }

    /// Reads a model from where it is.
    ///
    /// - Parameters:
    ///   - source: The model.
    ///   - labelsPath: A labels file that replaces the model's own labels. Given with a
    ///     `.tflite` file, the model also runs as itself rather than as a bundle beside it.
    /// - Throws: ``ModelBundleError`` for a bundle, zip or metadata that cannot be read,
    ///   ``InterpreterError/failedToLoadModel(reason:)`` for a missing or non-TFLite model
    ///   file, ``NetRunnerError/unreadableLabels(file:reason:)`` for a labels file.
    public init(_ source: ModelSource, labelsPath: String? = nil) throws {
        let given = try labelsPath.map { path in LabelsFile(text: try LabelMap.text(contentsOfFile: path), source: path)
        }
        switch source {
        case .path(let path):
            if ModelBundle.isBundle(path) {
                try self.init(bundle: try ModelBundle(path: path), name: path)
            } else if ZippedModelBundle.isZip(path) {
                try self.init(zippedBundleAt: path)
            } else {
                let data = try Interpreter.modelData(contentsOf: path)
                let metadataBuffer = TFLiteMetadata.buffer(inModel: data)
                if given == nil, metadataBuffer == nil, let sibling = ModelBundle.sibling(of: path) {
                    try self.init(bundle: sibling, name: path, modelData: data)
                } else {
                    try self.init(
                        name: path, modelFile: path, modelData: data, description: nil, bundlePath: nil,
                        describedLabels: [:], metadataBuffer: metadataBuffer)
                }
            }
        case .bundleData(let name, let modelData, let description, let assets):
            var labels: [String: LabelsFile] = [:]
            for layer in description?.outputs ?? [] {
                guard let file = layer.labels else { continue }
                guard let bytes = assets[file] else {
                    throw ModelBundleError.missingFile(bundle: name, file: "assets/" + file)
                }
                labels[file] = LabelsFile(
                    text: String(decoding: bytes, as: UTF8.self), source: "\(name)/assets/\(file)")
            }
            try self.init(
                name: name, modelFile: name, modelData: modelData, description: description, bundlePath: nil,
                describedLabels: labels, metadataBuffer: TFLiteMetadata.buffer(inModel: modelData))
        }
        if let given { givenLabels = .file(given) }
    }

    /// Reads a bundle's model and the labels files its description names.
    ///
    /// - Parameters:
    ///   - bundle: The bundle.
    ///   - labelsPath: A labels file that replaces the description's.
    /// - Throws: The errors of ``init(_:labelsPath:)``.
    public init(bundle: ModelBundle, labelsPath: String? = nil) throws {
        try self.init(bundle: bundle, name: bundle.path)
        if let labelsPath {
            givenLabels = .file(LabelsFile(text: try LabelMap.text(contentsOfFile: labelsPath), source: labelsPath))
        }
    }

    /// Reads a zipped bundle's description, model and labels straight from the archive (each
    /// entry streamed and checked against its CRC-32), unpacking nothing to disk.
    private init(zippedBundleAt path: String) throws {
        let (archive, root) = try ZippedModelBundle.archive(at: path)
        func entry(_ relative: String) throws -> Data {
            guard !relative.hasPrefix("/"), !relative.split(separator: "/").contains("..") else {
                throw ModelBundleError.fileOutsideBundle(bundle: path, file: relative)
            }
            guard let entry = archive.entries.first(where: { $0.name == root + relative }) else {
                throw ModelBundleError.missingFile(bundle: path, file: relative)
            }
            return try archive.data(of: entry)
        }
        let description = try ModelDescription.parse(try entry("model.json"), source: path + ":model.json")
        var labels: [String: LabelsFile] = [:]
        for layer in description.outputs {
            guard let file = layer.labels, labels[file] == nil else { continue }
            let source = path + ":assets/" + file
            guard let text = String(validating: try entry("assets/" + file), as: UTF8.self) else {
                throw NetRunnerError.unreadableLabels(file: source, reason: "the file is not UTF-8 text")
            }
            labels[file] = LabelsFile(text: text, source: source)
        }
        let data = try entry(description.model.file)
        try self.init(
            name: path, modelFile: path + ":" + description.model.file, modelData: data, description: description,
            bundlePath: nil, describedLabels: labels, metadataBuffer: TFLiteMetadata.buffer(inModel: data),
            descriptionFile: path + ":model.json")
    }

    private init(bundle: ModelBundle, name: String, modelData: Data? = nil) throws {
        let modelPath = try bundle.modelPath
        let data = try modelData ?? Interpreter.modelData(contentsOf: modelPath)
        var labels: [String: LabelsFile] = [:]
        for layer in bundle.description.outputs {
            guard let file = layer.labels, labels[file] == nil else { continue }
            let path = try bundle.assetPath(file)
            labels[file] = LabelsFile(text: try LabelMap.text(contentsOfFile: path), source: path)
        }
        try self.init(
            name: name, modelFile: modelPath, modelData: data, description: bundle.description,
            bundlePath: bundle.path, describedLabels: labels,
            metadataBuffer: TFLiteMetadata.buffer(inModel: data))
    }

    private init(
        name: String, modelFile: String, modelData: Data, description: ModelDescription?, bundlePath: String?,
        describedLabels: [String: LabelsFile], metadataBuffer: Data?, descriptionFile: String? = nil
    ) throws {
        self.descriptionFile = descriptionFile ?? (bundlePath ?? name) + "/model.json"
        self.name = name
        self.modelFile = modelFile
        self.modelData = modelData
        self.description = description
        self.bundlePath = bundlePath
        self.describedLabels = describedLabels
        if let metadataBuffer {
            self.metadata = try TFLiteMetadata(metadataBuffer, source: modelFile)
            self.packedFiles = try PackedFiles(model: modelData, source: modelFile)
        } else {
            self.metadata = nil
            self.packedFiles = nil
        }
    }

    /// This model with labels that replace its own (an embedded model's labels, for example).
    ///
    /// - Parameter labels: The labels.
    /// - Returns: The same model, labelled by `labels`.
    public func labelled(by labels: LabelMap) -> LoadedModel {
        var copy = self
        copy.givenLabels = .map(labels)
        return copy
    }

    /// Creates an interpreter for the model, allocates its tensors and checks the description
    /// (if any) against it; the model first passes ``ModelGate`` (once per model).
    ///
    /// - Parameter options: The interpreter's options.
    /// - Returns: A ready interpreter, one per thread.
    /// - Throws: ``InterpreterError`` for a model the runtime refuses,
    ///   ``ModelBundleError/descriptionMismatch(file:problems:)`` for a description that does
    ///   not fit it.
    public func makeInterpreter(options: Interpreter.Options = Interpreter.Options()) throws -> Interpreter {
        try ModelGate.admit(self)
        let interpreter = try Interpreter(modelData: modelData, source: modelFile, options: options)
        try interpreter.allocateTensors()
        if let description {
            try description.check(against: interpreter, file: descriptionFile)
        }
        return interpreter
    }

    /// The number of outputs of the model's main subgraph, read from the flatbuffer without
    /// compiling the model; `nil` when the file is too damaged to tell.
    public var outputCount: Int? {
        modelData.withUnsafeBytes { bytes -> Int? in
            guard let base = bytes.baseAddress, let root = FlatBuffer(base: base, count: bytes.count).root,
                case .value(let subgraphs) = root.tables(2, limit: 1 << 16),  // Model.subgraphs
                let main = subgraphs.first
            else { return nil }
            return main.vectorCount(2, elementSize: 4).count  // SubGraph.outputs: [int]
        }
    }

    /// The shape and element type of each output of the model's main subgraph.
    ///
    /// Read from the flatbuffer without compiling the model (for a bare `.tflite`, the task is
    /// told from them: ``VisionTaskDefinition/claims(outputs:)``); `nil` when the file is too
    /// damaged to tell. A type the schema names that ``Tensor/DataType`` does not is `nil`.
    public var outputShapes: [(dimensions: [Int], dataType: Tensor.DataType?)]? {
        modelData.withUnsafeBytes { bytes -> [(dimensions: [Int], dataType: Tensor.DataType?)]? in
            guard let base = bytes.baseAddress, let root = FlatBuffer(base: base, count: bytes.count).root,
                case .value(let subgraphs) = root.tables(2, limit: 1 << 16),  // Model.subgraphs
                let main = subgraphs.first, case .value(let tensors) = main.tables(0),  // SubGraph.tensors
                case .value(let outputs) = main.vectorCount(2, elementSize: 4), outputs <= 1 << 10
            else { return nil }
            var shapes: [(dimensions: [Int], dataType: Tensor.DataType?)] = []
            for output in 0..<outputs {
                guard let index = main.int32Element(2, output).map(Int.init), tensors.indices.contains(index),
                    case .value(let rank) = tensors[index].vectorCount(0, elementSize: 4), rank <= 16,  // Tensor.shape
                    let type = tensors[index].u8(1)  // Tensor.type
                else { return nil }
                let dimensions = (0..<rank).compactMap { tensors[index].int32Element(0, $0).map(Int.init) }
                guard dimensions.count == rank else { return nil }
                // The schema's TensorType: FLOAT32 0, INT32 2, UINT8 3, INT64 4, INT8 9.
                let types: [UInt8: Tensor.DataType] = [0: .float32, 2: .int32, 3: .uInt8, 4: .int64, 9: .int8]
                shapes.append((dimensions, types[type]))
            }
            return shapes
        }
    }

    /// The labels of an output: the user's, else the description's, else those packed in the
    /// model by its TFLite metadata.
    ///
    /// - Parameters:
    ///   - output: The output's index, or `nil` for the first output that has labels (a
    ///     detector's class labels sit on one of several outputs).
    ///   - classCount: The number of classes, when known: the labels are checked against it
    ///     (after dropping a leading `background` line if that makes them agree).
    /// - Returns: The labels, or `nil` when nothing names them.
    /// - Throws: ``NetRunnerError/labelCountMismatch(file:labels:classes:)``,
    ///   ``ModelBundleError/invalidMetadata(file:reason:)`` for labels the metadata names but
    ///   the model does not pack.
    public func labels(forOutput output: Int?, classCount: Int? = nil) throws -> LabelMap? {
        switch givenLabels {
        case .map(let labels):
            if let classCount, labels.count != classCount {
                throw NetRunnerError.labelCountMismatch(file: "labels", labels: labels.count, classes: classCount)
            }
            return labels
        case .file(let file):
            return try LabelMap(text: file.text, source: file.source, classCount: classCount)
        case nil:
            break
        }
        if let description {
            let layers = output.map { description.outputs.indices.contains($0) ? [description.outputs[$0]] : [] }
            if let name = (layers ?? description.outputs).lazy.compactMap(\.labels).first,
                let file = describedLabels[name]
            {
                return try LabelMap(text: file.text, source: file.source, classCount: classCount)
            }
        }
        if let metadata {
            let tensors = output.map { metadata.outputs.indices.contains($0) ? [metadata.outputs[$0]] : [] }
            if let file = (tensors ?? metadata.outputs).lazy.compactMap({ $0.labelsFile() }).first {
                return try LabelMap(
                    text: try packedText(file, what: "labels file"), source: "\(modelFile):\(file.name)",
                    classCount: classCount)
            }
        }
        return nil
    }

    /// The text of a file the model's TFLite metadata names and the model packs.
    ///
    /// - Parameters:
    ///   - file: The file, as the metadata names it.
    ///   - what: What the file is, for the error.
    /// - Returns: Its text.
    /// - Throws: ``ModelBundleError/invalidMetadata(file:reason:)`` when it is not packed.
    func packedText(_ file: TFLiteMetadata.AssociatedFile, what: String) throws(ModelBundleError) -> String {
        guard let bytes = packedFiles?.files[file.name] else {
            throw .invalidMetadata(
                file: modelFile, reason: "its metadata names the \(what) \(file.name), which is not packed in it")
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether the labels come from the user rather than the model.
    var hasGivenLabels: Bool { givenLabels != nil }
}

extension LoadedModel {
    /// A model held in memory whose labels, if any, are given as values (the tasks'
    /// `init(modelData:…)` initialisers): the description's labels file names are ignored.
    static func inMemory(
        _ modelData: Data, name: String, description: ModelDescription?, labels: LabelMap?
    ) throws -> LoadedModel {
        var description = description
        if let outputs = description?.outputs {
            description?.outputs = outputs.map { layer in
                var layer = layer
                layer.labels = nil
                return layer
            }
        }
        let model = try LoadedModel(
            .bundleData(name: name, modelData: modelData, description: description, assets: [:]))
        return labels.map(model.labelled(by:)) ?? model
    }
}

/// A digest computed on first use and kept, shared by the copies of a ``LoadedModel``.
private final class DigestMemo: Sendable {
    private let stored = Mutex<String?>(nil)

    func value(of data: Data) -> String {
        stored.withLock { stored in
            if let stored { return stored }
            let computed = SHA256.hexDigest(of: data)
            stored = computed
            return computed
        }
    }
}
