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
            return try unload(context.parameters.get("name") ?? "")
        }
        routes.get("/v2/models/stats", .open, .operation("allModelStatistics")) { _, _ in
            HTTPReply.json(StatisticsReply(modelStats: engine.models.map { statistics($0.id) }))
        }
        for (prefix, version) in [("/v2/models/{name}", ""), ("/v2/models/{name}/versions/{version}", "Version")] {
            routes.get(prefix, .open, kserve) { _, context in
                if let refusal = Self.unknownVersion(context) { return refusal }
                return try metadata(context.parameters.get("name") ?? "")
            }
            routes.get(prefix + "/config", .open, .operation("modelConfig" + version)) { request, context in
                if let refusal = Self.unknownVersion(context) { return refusal }
                return try configuration(context.parameters.get("name") ?? "", showsPaths: showsPaths(request))
            }
            routes.get(prefix + "/ready", .open, kserve) { _, context in
                let ready =
                    Self.unknownVersion(context) == nil
                    && engine.state(of: context.parameters.get("name") ?? "") == .ready
                return Response(status: ready ? .ok : .serviceUnavailable)
            }
            routes.get(prefix + "/stats", .open, .operation("modelStatistics" + version)) { _, context in
                if let refusal = Self.unknownVersion(context) { return refusal }
                return try statisticsReply(context.parameters.get("name") ?? "")
            }
            routes.post(prefix + "/infer", .keyed, kserve) { request, context in
                if let refusal = Self.unknownVersion(context) { return refusal }
                return try await infer(request, model: context.parameters.get("name") ?? "")
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

    func metadata(_ name: String) throws -> Response {
        _ = try engine.model(name)
        guard let details = engine.details(of: name) else {
            throw EngineError.modelUnavailable(id: name, reason: notLoadedReason(name))
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
    func configuration(_ name: String, showsPaths: Bool = false) throws -> Response {
        _ = try engine.model(name)
        guard let details = engine.details(of: name) else {
            let reason: String
            if case .failed(let why) = engine.state(of: name) {
                reason = (try? engine.model(name)).map { $0.failureReason(why, showsPath: showsPaths) } ?? why
            } else {
                reason = notLoadedReason(name)
            }
            throw EngineError.modelUnavailable(id: name, reason: reason)
        }
        return HTTPReply.json(Self.configuration(name, details: details, instances: engine.configuration.threads))
    }

    /// Why a model has no details: unloaded, or not loaded yet.
    func notLoadedReason(_ name: String) -> String {
        engine.state(of: name) == .unloaded
            ? RouteFailure.unloadedReason(name) : "it is not loaded (yet)."
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

    // MARK: Infer

    func infer(_ request: Request, model name: String) async throws -> Response {
        let served = try engine.model(name)
        guard let details = engine.details(of: name) else {
            throw EngineError.modelUnavailable(id: name, reason: notLoadedReason(name))
        }
        // Refused by its Content-Length before the body is read (a client waiting for `100
        // Continue` then sends none of it); a length past Int's range is left to the limit below.
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > maximumUploadBytes {
            throw RouteFailure(.tooLarge, "The request is larger than the limit of \(maximumUploadBytes) bytes.")
        }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: maximumUploadBytes)
        } catch is NIOTooManyBytesError {
            throw RouteFailure(.tooLarge, "The request is larger than the limit of \(maximumUploadBytes) bytes.")
        } catch {
            throw RouteFailure(.invalid, "The request could not be read: \(error)")
        }
        let inference = try body.withUnsafeReadableBytes { bytes throws(KServeTensorCodec.Refusal) in
            try KServeInference(body: bytes, headerLength: request.headers[Self.headerLength], details: details)
        }
        let outputs = try await engine.run(model: name, inputs: inference.inputs)
        let answer = try inference.response(outputs: outputs, model: served.id, labels: details.labels)
        guard let length = answer.jsonLength else {
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: answer.body)))
        }
        return Response(
            status: .ok, headers: [.contentType: "application/octet-stream", Self.headerLength: String(length)],
            body: .init(byteBuffer: ByteBuffer(bytes: answer.body)))
    }

    // MARK: Conversions

    /// KServe's name for a tensor type (``KServeTensorCodec``'s table).
    static func datatype(_ type: Tensor.DataType) -> String {
        KServeTensorCodec.name(type)
    }

    /// KServe's error body: `{"error": "..."}`.
    static func error(_ message: String, status: HTTPResponse.Status, headers: HTTPFields = [:]) -> Response {
        struct Body: Encodable { var error: String }
        return HTTPReply.json(Body(error: message), status: status, headers: headers)
    }
}
