import FoundationEssentials
import HTTPTypes
import Hummingbird
import NIOCore
import NetRunner
import NetRunnerEngine
import NetRunnerHTTP
import NetRunnerSupport
import TensorFlowLite

/// KServe v2, the Open Inference Protocol that Triton, MLServer and OpenVINO speak, at `/v2`:
/// health, server and model metadata, readiness, and `infer` with JSON tensors, the binary
/// tensor extension (`Inference-Header-Content-Length`) and the classification extension
/// (an output's `"classification": N` parameter answers the top N as `"score:index:label"`).
///
/// Two of Triton's extensions: the model configuration (`GET /v2/models/{name}/config`, the
/// JSON of model_config.proto's `ModelConfig`) and the model repository's index (`POST
/// /v2/repository/index`, every served model with its state; `GET` answers the same), with
/// its explicit model control (`POST /v2/repository/models/{name}/load` and `/unload`), and the
/// statistics extension (`GET /v2/models/{name}/stats`, counts and cumulative times per stage).
/// Each model has one version, `1`; another version is a 404.
///
/// Inputs are the model's input tensors, preprocessed by the client as Triton clients do;
/// `POST /v1/models/{id}/classify` takes the encoded image instead.
struct KServeRoutes {
    let engine: InferenceEngine
    let maximumUploadBytes: Int
    let version: String
    /// Who may see where the models are on this machine (a failed model's reason names its
    /// file): only requests with a valid key; without keys, no one sees more than file names.
    var access: ServerAccess? = nil
    /// The models folder a model not served is loaded from (`load`); `nil`: only the models
    /// served can be loaded again.
    var modelsFolder: String? = nil

    /// The binary tensor extension's header: the length of the JSON part of the body.
    static let headerLength = HTTPField.Name.custom("Inference-Header-Content-Length")

    /// The routes.
    ///
    /// Metadata, readiness, configuration and statistics are open; `infer`, the
    /// repository's index and model control need a key.
    var routes: RouteList<BasicRequestContext> {
        let kserve = Route<BasicRequestContext>.Documentation.elsewhere("KServe v2's specification")
        var routes = RouteList<BasicRequestContext>()
        routes.get("/v2", .open, kserve) { _, _ in
            HTTPReply.json(
                ServerMetadata(
                    name: "netrunner", version: version,
                    extensions: [
                        "classification", "binary_tensor_data", "model_configuration", "model_repository",
                        "statistics",
                    ]))
        }
        routes.get("/v2/health/live", .open, .operation("live")) { _, _ in Response(status: .ok) }
        routes.get("/v2/health/ready", .open, .operation("ready")) { _, _ in
            Response(status: engine.isReady ? .ok : .serviceUnavailable)
        }
        routes.post("/v2/repository/index", .keyed, .operation("repositoryIndex")) { request, _ in
            await repositoryIndex(request)
        }
        routes.get("/v2/repository/index", .open, .operation("repositoryIndexAll")) { request, _ in
            HTTPReply.json(repositoryIndex(readyOnly: false, showsPaths: showsPaths(request)))
        }
        routes.post("/v2/repository/models/{name}/load", .keyed, .operation("loadModel")) { request, context in
            if let refusal = await Self.refusesControlBody(request) { return refusal }
            return await load(context.parameters.get("name") ?? "", showsPaths: showsPaths(request))
        }
        routes.post("/v2/repository/models/{name}/unload", .keyed, .operation("unloadModel")) { request, context in
            if let refusal = await Self.refusesControlBody(request) { return refusal }
            return unload(context.parameters.get("name") ?? "")
        }
        routes.get("/v2/models/stats", .open, .operation("allModelStatistics")) { _, _ in
            HTTPReply.json(StatisticsReply(modelStats: engine.models.map { statistics($0.id) }))
        }
        for (prefix, version) in [("/v2/models/{name}", ""), ("/v2/models/{name}/versions/{version}", "Version")] {
            routes.get(prefix, .open, kserve) { _, context in
                if let refusal = Self.unknownVersion(context) { return refusal }
                return metadata(context.parameters.get("name") ?? "")
            }
            routes.get(prefix + "/config", .open, .operation("modelConfig" + version)) { request, context in
                if let refusal = Self.unknownVersion(context) { return refusal }
                return configuration(context.parameters.get("name") ?? "", showsPaths: showsPaths(request))
            }
            routes.get(prefix + "/ready", .open, kserve) { _, context in
                let ready =
                    Self.unknownVersion(context) == nil
                    && engine.state(of: context.parameters.get("name") ?? "") == .ready
                return Response(status: ready ? .ok : .serviceUnavailable)
            }
            routes.get(prefix + "/stats", .open, .operation("modelStatistics" + version)) { _, context in
                if let refusal = Self.unknownVersion(context) { return refusal }
                return statisticsReply(context.parameters.get("name") ?? "")
            }
            routes.post(prefix + "/infer", .keyed, kserve) { request, context in
                if let refusal = Self.unknownVersion(context) { return refusal }
                return await infer(request, model: context.parameters.get("name") ?? "")
            }
        }
        return routes
    }

    /// The 404 of a route naming a version other than `1`, the one version of every model;
    /// `nil` for `1` or no version.
    static func unknownVersion(_ context: BasicRequestContext) -> Response? {
        guard let version = context.parameters.get("version"), version != "1" else { return nil }
        let name = context.parameters.get("name") ?? ""
        return error(
            "Model \"\(name)\" has no version \"\(version)\": each model has one version, 1.", status: .notFound)
    }

    // MARK: Metadata

    struct ServerMetadata: Encodable {
        var name: String
        var version: String
        var extensions: [String]
    }

    struct TensorMetadata: Encodable {
        var name: String
        var datatype: String
        var shape: [Int]
    }

    struct ModelMetadata: Encodable {
        var name: String
        var versions: [String]
        var platform: String
        var inputs: [TensorMetadata]
        var outputs: [TensorMetadata]
    }

    func metadata(_ name: String) -> Response {
        do {
            _ = try engine.model(name)
        } catch {
            return Self.error(error)
        }
        guard let details = engine.details(of: name) else {
            return Self.error(.modelUnavailable(id: name, reason: notLoadedReason(name)))
        }
        let describe = { (tensor: Tensor) in
            TensorMetadata(name: tensor.name, datatype: Self.datatype(tensor.dataType), shape: tensor.shape.dimensions)
        }
        return HTTPReply.json(
            ModelMetadata(
                name: name, versions: ["1"], platform: Self.platform, inputs: details.inputs.map(describe),
                outputs: details.outputs.map(describe)))
    }

    /// The platform in metadata and configurations.
    ///
    /// Triton has no TensorFlow Lite platform of
    /// its own (its TFLite backends leave it empty); this is the name TensorFlow Serving uses.
    static let platform = "tensorflow_lite"

    // MARK: Model configuration (Triton's extension)

    /// model_config.proto's `ModelConfig` in Triton's JSON, the fields that say something here:
    /// no batching (`max_batch_size` 0, so `dims` are the tensors' whole shapes, as in the
    /// metadata), one version, one instance per worker thread on the CPU.
    struct ModelConfiguration: Encodable {
        struct VersionPolicy: Encodable {
            struct Latest: Encodable {
                var numberOfVersions: Int
                enum CodingKeys: String, CodingKey { case numberOfVersions = "num_versions" }
            }
            var latest: Latest
        }
        struct TensorConfiguration: Encodable {
            var name: String
            var dataType: String
            /// Inputs only (`FORMAT_NONE`).
            var format: String?
            var dims: [Int]
            var isShapeTensor = false
            enum CodingKeys: String, CodingKey {
                case name, format, dims
                case dataType = "data_type"
                case isShapeTensor = "is_shape_tensor"
            }
        }
        struct InstanceGroup: Encodable {
            var name: String
            var kind = "KIND_CPU"
            var count: Int
        }
        var name: String
        var platform: String
        var backend: String
        var versionPolicy: VersionPolicy
        var maxBatchSize: Int
        var input: [TensorConfiguration]
        var output: [TensorConfiguration]
        var instanceGroup: [InstanceGroup]
        enum CodingKeys: String, CodingKey {
            case name, platform, backend, input, output
            case versionPolicy = "version_policy"
            case maxBatchSize = "max_batch_size"
            case instanceGroup = "instance_group"
        }
    }

    /// `GET /v2/models/{name}/config`: the model's configuration, or KServe's error (404 for an
    /// unknown model, 503 while it loads or if it failed).
    func configuration(_ name: String, showsPaths: Bool = false) -> Response {
        do {
            _ = try engine.model(name)
        } catch {
            return Self.error(error)
        }
        guard let details = engine.details(of: name) else {
            let reason: String
            if case .failed(let why) = engine.state(of: name) {
                reason = (try? engine.model(name)).map { $0.failureReason(why, showsPath: showsPaths) } ?? why
            } else {
                reason = notLoadedReason(name)
            }
            return Self.error(.modelUnavailable(id: name, reason: reason))
        }
        return HTTPReply.json(Self.configuration(name, details: details, instances: engine.configuration.threads))
    }

    /// Why a model has no details: unloaded, or not loaded yet.
    func notLoadedReason(_ name: String) -> String {
        engine.state(of: name) == .unloaded
            ? "it is unloaded; POST /v2/repository/models/\(name)/load serves it again." : "it is not loaded (yet)."
    }

    /// A loaded model's configuration.
    static func configuration(_ name: String, details: ModelDetails, instances: Int) -> ModelConfiguration {
        let describe = { (tensor: Tensor, isInput: Bool) in
            ModelConfiguration.TensorConfiguration(
                name: tensor.name, dataType: KServeTensorCodec.configName(tensor.dataType),
                format: isInput ? "FORMAT_NONE" : nil, dims: tensor.shape.dimensions)
        }
        return ModelConfiguration(
            name: name, platform: platform, backend: "tflite",
            versionPolicy: .init(latest: .init(numberOfVersions: 1)), maxBatchSize: 0,
            input: details.inputs.map { describe($0, true) }, output: details.outputs.map { describe($0, false) },
            instanceGroup: [.init(name: name, count: instances)])
    }

    // MARK: Repository index (Triton's model repository extension)

    /// One model in the index: Triton's states `READY`, `LOADING` and `UNAVAILABLE` (with the
    /// reason it failed).
    struct IndexEntry: Encodable, Equatable {
        var name: String
        var version: String
        var state: String
        var reason: String
    }

    /// The index request: `{"ready": true}` lists only the models ready; an empty body, all.
    struct IndexRequest: Decodable {
        var ready: Bool?

        enum CodingKeys: String, CodingKey { case ready }

        /// `ready`, if given, is `true` or `false`; `null` is refused, not taken for absent.
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            ready = container.contains(.ready) ? try container.decode(Bool.self, forKey: .ready) : nil
        }
    }

    /// `POST /v2/repository/index`: every served model with its state, in the order served.
    func repositoryIndex(_ request: Request) async -> Response {
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: 64 * 1024)
        } catch {
            return Self.error(
                "The index request is larger than 64 KiB; it takes {\"ready\": true}.", status: .contentTooLarge)
        }
        var readyOnly = false
        if body.readableBytesView.contains(where: { !Self.isWhitespace($0) }) {
            do {
                readyOnly =
                    try JSONDecoder().decode(IndexRequest.self, from: Data(body.readableBytesView)).ready ?? false
            } catch {
                return Self.error(
                    "The index request is not {\"ready\": true or false}: \(Self.describe(error))", status: .badRequest)
            }
        }
        return HTTPReply.json(repositoryIndex(readyOnly: readyOnly, showsPaths: showsPaths(request)))
    }

    /// Whether a request may see the models' paths on this machine (see ``access``).
    func showsPaths(_ request: Request) -> Bool {
        access?.hasKey(request.headers) ?? false
    }

    /// The index entries, all models or those ready.
    func repositoryIndex(readyOnly: Bool, showsPaths: Bool = false) -> [IndexEntry] {
        engine.models.compactMap { served in
            let entry: IndexEntry
            switch engine.state(of: served.id) {
            case .ready: entry = IndexEntry(name: served.id, version: "1", state: "READY", reason: "")
            case .loading:
                entry = IndexEntry(name: served.id, version: "1", state: "LOADING", reason: "loading and warming up")
            case .failed(let why):
                entry = IndexEntry(
                    name: served.id, version: "1", state: "UNAVAILABLE",
                    reason: served.failureReason(why, showsPath: showsPaths))
            case .unloaded: entry = IndexEntry(name: served.id, version: "1", state: "UNAVAILABLE", reason: "unloaded")
            case nil: entry = IndexEntry(name: served.id, version: "1", state: "UNKNOWN", reason: "")
            }
            return !readyOnly || entry.state == "READY" ? entry : nil
        }
    }

    // MARK: Model control (Triton's model repository extension, explicit mode)

    /// `POST /v2/repository/models/{name}/load`: serves a model again, read anew from its file
    /// (an embedded model from the program), or for the first time from the models folder;
    /// 200 once it is ready, 404 for a name neither served nor in the folder, 400 when it fails
    /// to load (its reason).
    func load(_ name: String, showsPaths: Bool) async -> Response {
        let engine = self.engine
        let folder = modelsFolder
        // Reading and checking a model (a child process for one not trusted) is no work for
        // the event loop.
        let outcome = await Task.detached { () -> Result<Void, LoadRefusal> in
            let model: ServedModel
            if let served = engine.models.first(where: { $0.id == name }) {
                if served.origin == "embedded" {
                    model = served
                } else {
                    do {
                        model = ServedModel(
                            id: name, model: try LoadedModel(.path(served.origin)), origin: served.origin)
                    } catch {
                        return .failure(LoadRefusal(message: "\(error)", path: served.origin))
                    }
                }
            } else if let folder, let path = (try? ModelDirectory(path: folder))?.models[name] {
                do {
                    model = ServedModel(id: name, model: try LoadedModel(.path(path)), origin: path)
                } catch {
                    return .failure(LoadRefusal(message: "\(error)", path: path))
                }
            } else {
                let known = engine.models.map(\.id)
                return .failure(
                    LoadRefusal(
                        message: "No model \"\(name)\" is served or in the models folder"
                            + (folder == nil ? " (this server reads none: it runs with --no-import)" : "")
                            + "; the models served are: \(known.joined(separator: ", ")).",
                        status: .notFound))
            }
            do {
                try await engine.load(model)
                return .success(())
            } catch EngineError.busy(let queued) {
                return .failure(
                    LoadRefusal(
                        message: "\(EngineError.busy(queued: queued))", path: model.origin, status: .serviceUnavailable)
                )
            } catch {
                return .failure(LoadRefusal(message: "\(error)", path: model.origin))
            }
        }.value
        switch outcome {
        case .success: return Response(status: .ok)
        case .failure(let refusal):
            var message = "failed to load '\(name)': \(refusal.message)"
            if !showsPaths, let path = refusal.path, let slash = path.lastIndex(of: "/") {
                message = message.replacing(path, with: String(path[path.index(after: slash)...]))
            }
            return Self.error(message, status: refusal.status)
        }
    }

    /// The 400 (or 413) of a load or unload body that is not empty or a JSON object (Triton's
    /// `{"parameters": {...}}`, whose parameters are not used here), or `nil`.
    static func refusesControlBody(_ request: Request) async -> Response? {
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: 64 * 1024)
        } catch {
            return Self.error(
                "The request is larger than 64 KiB; it takes {\"parameters\": {}}.", status: .contentTooLarge)
        }
        guard body.readableBytesView.contains(where: { !isWhitespace($0) }) else { return nil }
        do {
            _ = try JSONDecoder().decode([String: JSONValue].self, from: Data(body.readableBytesView))
            return nil
        } catch {
            return Self.error(
                "The request is not a JSON object such as {\"parameters\": {}}: \(describe(error))", status: .badRequest
            )
        }
    }

    /// Why a model could not be loaded, and where it was read from.
    struct LoadRefusal: Error {
        var message: String
        var path: String? = nil
        var status: HTTPResponse.Status = .badRequest
    }

    /// `POST /v2/repository/models/{name}/unload`: stops serving a model (UNAVAILABLE,
    /// "unloaded" in the index; its files stay); 404 for an unknown name.
    func unload(_ name: String) -> Response {
        do {
            try engine.unload(name)
            return Response(status: .ok)
        } catch {
            return Self.error(error)
        }
    }

    // MARK: Statistics (Triton's extension)

    /// One stage's count and cumulative nanoseconds.
    struct StageStatistics: Encodable {
        var count: Int
        var ns: UInt64

        init(_ stage: ModelStatistics.Stage) {
            count = stage.count
            ns = stage.nanoseconds
        }
    }

    /// Triton's `InferStatistics`: requests (success, fail) and their stages.
    struct InferenceStatistics: Encodable {
        var success, fail, queue, computeInput, computeInfer, computeOutput, cacheHit, cacheMiss: StageStatistics
        enum CodingKeys: String, CodingKey {
            case success, fail, queue
            case computeInput = "compute_input"
            case computeInfer = "compute_infer"
            case computeOutput = "compute_output"
            case cacheHit = "cache_hit"
            case cacheMiss = "cache_miss"
        }
    }

    /// Triton's `ModelStatistics` of one version.
    struct ModelStatisticsReply: Encodable {
        var name: String
        var version = "1"
        var lastInference: UInt64
        var inferenceCount: Int
        var executionCount: Int
        var inferenceStats: InferenceStatistics
        var batchStats: [String] = []
        enum CodingKeys: String, CodingKey {
            case name, version
            case lastInference = "last_inference"
            case inferenceCount = "inference_count"
            case executionCount = "execution_count"
            case inferenceStats = "inference_stats"
            case batchStats = "batch_stats"
        }
    }

    /// `{"model_stats": [...]}`.
    struct StatisticsReply: Encodable {
        var modelStats: [ModelStatisticsReply]
        enum CodingKeys: String, CodingKey { case modelStats = "model_stats" }
    }

    /// `GET /v2/models/{name}/stats`: the model's statistics, or 404 for an unknown model.
    func statisticsReply(_ name: String) -> Response {
        do {
            _ = try engine.model(name)
        } catch {
            return Self.error(error)
        }
        return HTTPReply.json(StatisticsReply(modelStats: [statistics(name)]))
    }

    /// A model's statistics in Triton's form.
    func statistics(_ name: String) -> ModelStatisticsReply {
        let kept = engine.statistics(of: name)
        let none = StageStatistics(ModelStatistics.Stage())
        return ModelStatisticsReply(
            name: name, lastInference: kept.lastInference, inferenceCount: kept.inferenceCount,
            executionCount: kept.executionCount,
            inferenceStats: InferenceStatistics(
                success: .init(kept.success), fail: .init(kept.fail), queue: .init(kept.queue),
                computeInput: .init(kept.computeInput), computeInfer: .init(kept.computeInfer),
                computeOutput: .init(kept.computeOutput), cacheHit: none, cacheMiss: none))
    }

    /// JSON's whitespace: space, tab, line feed, carriage return.
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    // MARK: Infer

    struct InferRequest: Decodable {
        struct Input: Decodable {
            var name: String
            var shape: [Int]
            var datatype: String
            var parameters: [String: JSONValue]?
            // `data` is not decoded: ``KServeInferBody`` finds it, ``KServeTensorCodec`` reads it.
        }
        struct RequestedOutput: Decodable {
            var name: String
            var parameters: [String: JSONValue]?
        }
        var id: String?
        var parameters: [String: JSONValue]?
        var inputs: [Input]
        var outputs: [RequestedOutput]?
    }

    struct InferError: Error {
        var message: String
        var status: HTTPResponse.Status = .badRequest
    }

    func infer(_ request: Request, model name: String) async -> Response {
        do {
            let served = try engine.model(name)
            guard let details = engine.details(of: name) else {
                throw EngineError.modelUnavailable(id: name, reason: notLoadedReason(name))
            }
            let body: ByteBuffer
            do {
                body = try await request.body.collect(upTo: maximumUploadBytes)
            } catch is NIOTooManyBytesError {
                throw InferError(
                    message: "The request is larger than the limit of \(maximumUploadBytes) bytes.",
                    status: .contentTooLarge)
            }
            let (parsed, inputs) = try body.withUnsafeReadableBytes { bytes in
                var headerLength = bytes.count
                if let declared = request.headers[Self.headerLength] {
                    headerLength = try Self.checked { () throws(NumberOutOfRange) in
                        try CheckedNumber.integer(declared, "Inference-Header-Content-Length", in: 0...bytes.count)
                    }
                }
                let json = UnsafeRawBufferPointer(rebasing: bytes[0..<headerLength])
                let located = try Self.refusing { () throws(KServeTensorCodec.Refusal) in
                    try KServeInferBody(json: json)
                }
                let parsed: InferRequest
                do {
                    parsed = try JSONDecoder().decode(InferRequest.self, from: located.skeleton)
                } catch {
                    var problem = Self.describe(error)
                    if let (line, column, reason) = JSONSyntax.firstError(in: located.skeleton) {
                        problem = "line \(line), column \(column): \(reason)"
                    }
                    throw InferError(message: "The inference request is not valid JSON for KServe v2: \(problem)")
                }
                let binary = UnsafeRawBufferPointer(rebasing: bytes[headerLength...])
                return (
                    parsed, try tensorData(parsed, json: json, data: located.data, binary: binary, details: details)
                )
            }
            let outputs = try await engine.run(model: name, inputs: inputs)
            return try respond(parsed, outputs: outputs, model: served, details: details)
        } catch let error as EngineError {
            return Self.error(error)
        } catch let error as InferError {
            return Self.error(error.message, status: error.status)
        } catch {
            return Self.error("\(error)", status: .badRequest)
        }
    }

    /// A decoding error as a client can act on it: where, and what (`at inputs[0].shape[0]:
    /// Parsed JSON number <1e30> does not fit in Int.`).
    static func describe(_ error: any Error) -> String {
        let context: DecodingError.Context
        switch error as? DecodingError {
        case .typeMismatch(_, let found), .valueNotFound(_, let found), .keyNotFound(_, let found),
            .dataCorrupted(let found):
            context = found
        default: return "\(error)"
        }
        var path = ""
        for key in context.codingPath {
            if let index = key.intValue {
                path += "[\(index)]"
            } else {
                path += (path.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return (path.isEmpty ? "" : "at \(path): ") + context.debugDescription
    }

    /// Runs a conversion of ``CheckedNumber``, its refusal as a 400.
    static func checked<Value>(_ body: () throws(NumberOutOfRange) -> Value) throws(InferError) -> Value {
        do {
            return try body()
        } catch {
            throw InferError(message: error.description)
        }
    }

    /// Runs a step of ``KServeTensorCodec``, its refusal as a 400.
    static func refusing<Value>(_ body: () throws(KServeTensorCodec.Refusal) -> Value) throws(InferError) -> Value {
        do {
            return try body()
        } catch {
            throw InferError(message: error.description)
        }
    }

    /// A parameter that must be a whole number, if given.
    static func integer(
        _ parameters: [String: JSONValue]?, _ key: String, of what: String, in range: ClosedRange<Int>
    ) throws(InferError) -> Int? {
        guard let value = parameters?[key] else { return nil }
        guard case .number(let number) = value else {
            throw InferError(message: "\(what): \(key) must be a number, not \(value.shown).")
        }
        return try checked { () throws(NumberOutOfRange) in
            try CheckedNumber.integer(number, "\(key) of \(what)", in: range)
        }
    }

    /// A parameter that must be true or false, if given.
    static func flag(_ parameters: [String: JSONValue]?, _ key: String, of what: String) throws(InferError) -> Bool? {
        guard let value = parameters?[key] else { return nil }
        guard case .bool(let flag) = value else {
            throw InferError(message: "\(what): \(key) must be true or false, not \(value.shown).")
        }
        return flag
    }

    /// The bytes of each model input, from JSON `data` or the binary section, in model order.
    func tensorData(
        _ request: InferRequest, json: UnsafeRawBufferPointer, data: [Int: Range<Int>],
        binary: UnsafeRawBufferPointer, details: ModelDetails
    ) throws(InferError) -> [Data] {
        var offset = 0
        var byName: [String: Data] = [:]
        for (position, input) in request.inputs.enumerated() {
            guard
                let tensor = details.inputs.first(where: { $0.name == input.name })
                    ?? (details.inputs.count == 1 && request.inputs.count == 1 ? details.inputs.first : nil)
            else {
                throw InferError(
                    message: "No input \"\(input.name)\"; the model's inputs are "
                        + details.inputs.map { "\"\($0.name)\"" }.joined(separator: ", ") + ".")
            }
            guard byName[tensor.name] == nil else {
                throw InferError(message: "Input \"\(tensor.name)\" is given twice.")
            }
            let expected = KServeTensorCodec.name(tensor.dataType)
            guard let size = KServeTensorCodec.datatype(tensor.dataType)?.size else {
                throw InferError(
                    message: "Input \"\(input.name)\" is \(tensor.dataType) \(tensor.shape.dimensions) in this model, "
                        + "which this server cannot take over KServe v2.")
            }
            guard input.datatype == expected else {
                throw InferError(
                    message: "Input \"\(input.name)\" is \(expected) \(tensor.shape.dimensions) in this model; "
                        + "the request sent \(input.datatype). (POST the encoded image to /v1/models/{id}/classify "
                        + "to let the server preprocess it.)")
            }
            let modelCount = tensor.data.count / size
            let mismatch = InferError(
                message: "Input \"\(input.name)\" has shape \(KServeTensorCodec.shown(input.shape)); the model's is "
                    + "\(tensor.shape.dimensions).")
            // The product with a limit: a shape like [2^62, 4] overflows Int.
            guard let elementCount = try? CheckedNumber.product(input.shape, "shape", limit: modelCount),
                elementCount == modelCount
            else { throw mismatch }
            let what = "input \"\(input.name)\""
            if let count = try Self.integer(
                input.parameters, "binary_data_size", of: what, in: 0...max(0, binary.count - offset))
            {
                guard count == tensor.data.count else {
                    throw InferError(
                        message: "Input \"\(input.name)\": binary_data_size \(count) does not fit: the tensor is "
                            + "\(tensor.data.count) bytes.")
                }
                byName[tensor.name] = Data(UnsafeRawBufferPointer(rebasing: binary[offset..<(offset + count)]))
                offset += count
            } else if let range = data[position],
                !UnsafeRawBufferPointer(rebasing: json[range]).elementsEqual("null".utf8)
            {
                byName[tensor.name] = try Self.refusing { () throws(KServeTensorCodec.Refusal) in
                    try KServeTensorCodec.decode(
                        json: UnsafeRawBufferPointer(rebasing: json[range]), as: tensor.dataType, shape: input.shape,
                        count: elementCount, input: input.name)
                }
            } else {
                throw InferError(message: "Input \"\(input.name)\" has neither data nor binary_data_size.")
            }
        }
        return try details.inputs.map { (tensor) throws(InferError) in
            guard let data = byName[tensor.name] else {
                throw InferError(message: "The request has no value for input \"\(tensor.name)\".")
            }
            return data
        }
    }

    /// The response: every output (or those asked for), as JSON or binary.
    ///
    /// Classification strings where asked. Written by hand, as ``KServeTensorCodec`` writes `data`.
    func respond(_ request: InferRequest, outputs: [Tensor], model: ServedModel, details: ModelDetails)
        throws(InferError) -> Response
    {
        let wantsBinaryByDefault = try Self.flag(request.parameters, "binary_data_output", of: "the request") ?? false
        let requested: [InferRequest.RequestedOutput] =
            request.outputs ?? outputs.map { InferRequest.RequestedOutput(name: $0.name, parameters: nil) }
        var text: [UInt8] = []
        var binary = Data()
        var anyBinary = false
        text.append(contentsOf: #"{"model_name":"#.utf8)
        KServeTensorCodec.appendString(model.id.utf8, to: &text)
        text.append(contentsOf: #","model_version":"1""#.utf8)
        if let id = request.id {
            text.append(contentsOf: #","id":"#.utf8)
            KServeTensorCodec.appendString(id.utf8, to: &text)
        }
        text.append(contentsOf: #","outputs":["#.utf8)
        // Each output once: a body of 700,000 copies of one name would otherwise ask for gigabytes.
        var seen: Set<String> = []
        for asked in requested where !seen.insert(asked.name).inserted {
            throw InferError(message: "Output \"\(asked.name)\" is asked for twice.")
        }
        for (position, asked) in requested.enumerated() {
            guard let tensor = outputs.first(where: { $0.name == asked.name }) else {
                throw InferError(
                    message: "No output \"\(asked.name)\"; the model's outputs are "
                        + outputs.map { "\"\($0.name)\"" }.joined(separator: ", ") + ".")
            }
            let what = "output \"\(asked.name)\""
            let binaryWanted = try Self.flag(asked.parameters, "binary_data", of: what) ?? wantsBinaryByDefault
            let datatype: String
            let shape: [Int]
            var raw: Data
            var data: [UInt8] = []
            if let count = try Self.integer(asked.parameters, "classification", of: what, in: 1...Int.max) {
                let strings = Self.classification(tensor, count: count, labels: details.labels)
                (datatype, shape) = ("BYTES", [1, strings.count])
                let elements = strings.map { Array($0.utf8) }
                raw = KServeTensorCodec.binary(elements)
                data.append(UInt8(ascii: "["))
                for (index, element) in elements.enumerated() {
                    if index > 0 { data.append(UInt8(ascii: ",")) }
                    KServeTensorCodec.appendString(element, to: &data)
                }
                data.append(UInt8(ascii: "]"))
            } else {
                (datatype, shape) = (KServeTensorCodec.name(tensor.dataType), tensor.shape.dimensions)
                raw = tensor.data
                if tensor.dataType == .string, let elements = KServeTensorCodec.strings(tensor.data) {
                    raw = KServeTensorCodec.binary(elements)
                }
                if !binaryWanted {
                    try Self.refusing { () throws(KServeTensorCodec.Refusal) in
                        try KServeTensorCodec.appendJSON(tensor.data, as: tensor.dataType, to: &data)
                    }
                }
            }
            if position > 0 { text.append(UInt8(ascii: ",")) }
            text.append(contentsOf: #"{"name":"#.utf8)
            KServeTensorCodec.appendString(tensor.name.utf8, to: &text)
            text.append(contentsOf: #","datatype":"#.utf8)
            KServeTensorCodec.appendString(datatype.utf8, to: &text)
            text.append(contentsOf: (#","shape":["# + shape.map(String.init).joined(separator: ",") + "]").utf8)
            if binaryWanted {
                anyBinary = true
                text.append(contentsOf: #","parameters":{"binary_data_size":\#(raw.count)}}"#.utf8)
                binary.append(raw)
            } else {
                text.append(contentsOf: #","data":"#.utf8)
                text.append(contentsOf: data)
                text.append(UInt8(ascii: "}"))
            }
        }
        text.append(contentsOf: "]}".utf8)
        guard anyBinary else {
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: text)))
        }
        var body = ByteBuffer(bytes: text)
        body.writeBytes(binary)
        return Response(
            status: .ok,
            headers: [.contentType: "application/octet-stream", Self.headerLength: String(text.count)],
            body: .init(byteBuffer: body))
    }

    // MARK: Conversions

    /// KServe's name for a tensor type (``KServeTensorCodec``'s table).
    static func datatype(_ type: Tensor.DataType) -> String {
        KServeTensorCodec.name(type)
    }

    /// Triton's classification strings: the top `count` scores as `"score:index:label"`,
    /// scores dequantized, six decimals; a count past the scores gives them all.
    static func classification(_ tensor: Tensor, count: Int, labels: LabelMap?) -> [String] {
        let scores = (try? tensor.dequantizedValues()) ?? []
        let top = Scores.topK(scores, k: count)
        return top.map { index in
            let score = fixedDecimals(Double(scores[index]), 6)
            if let labels, labels.labels.indices.contains(index) { return "\(score):\(index):\(labels.labels[index])" }
            return "\(score):\(index)"
        }
    }

    /// KServe's error body: `{"error": "..."}`.
    static func error(_ message: String, status: HTTPResponse.Status, headers: HTTPFields = [:]) -> Response {
        struct Body: Encodable { var error: String }
        return HTTPReply.json(Body(error: message), status: status, headers: headers)
    }

    static func error(_ failure: EngineError) -> Response {
        error("\(failure)", status: .init(code: failure.statusCode), headers: HTTPReply.retryHeaders(failure))
    }
}
