import FoundationEssentials
import HTTPTypes
import Hummingbird
import NIOCore
import NetRunner
import NetRunnerEngine
import NetRunnerHTTP
import NetRunnerImage
import NetRunnerSupport
import TensorFlowLite

/// The native API, `/v1`: models listed and described, images classified and detected, in the
/// JSON shapes of the CLI's `--json` (docs/results-line.schema.json), and photos rendered as
/// JPEGs for browsers that cannot draw them (`/v1/render`).
struct NativeRoutes {
    let engine: InferenceEngine
    let maximumUploadBytes: Int
    var metrics: ServerMetrics? = nil
    /// Who may see where the models are: their paths go only to requests with a valid key.
    var access: ServerAccess? = nil
    /// The tasks that get a route of their own (the registry's, looked at once by the caller).
    var tasks: [any VisionTaskDefinition] = VisionTaskRegistry.definitions

    /// The routes.
    var routes: RouteList<BasicRequestContext> {
        var routes = RouteList<BasicRequestContext>()
        routes.get("/v1/models", .open, .operation("listModels")) { request, _ in
            let paths = showsPaths(request)
            return HTTPReply.json(
                ModelList(models: engine.models.map { ModelInfo($0, engine: engine, showsPath: paths) }))
        }
        routes.get("/v1/models/{id}", .open, .operation("getModel")) { request, context in
            let id = context.parameters.get("id") ?? ""
            return HTTPReply.json(ModelInfo(try engine.model(id), engine: engine, showsPath: showsPaths(request)))
        }
        // A route per registered task, by its verb: /classify, /detect, ...
        for definition in tasks {
            let kind = definition.kind
            routes.post("/v1/models/{id}/\(definition.verb)", .keyed, .operation(definition.verb)) { request, context in
                try await answer(request, model: context.parameters.get("id") ?? "", task: kind)
            }
        }
        routes.post("/v1/models/{id}/run", .keyed, .operation("run")) { request, context in
            try await run(request, model: context.parameters.get("id") ?? "")
        }
        routes.post("/v1/render", .keyed, .operation("renderImage")) { request, _ in
            try await render(request)
        }
        return routes
    }

    /// Whether a request may see the models' paths on this machine: only with a valid API key
    /// (a server without keys shows every client the file names only).
    func showsPaths(_ request: Request) -> Bool {
        access?.hasKey(request.headers) ?? false
    }

    /// A described model's outputs for one upload, TensorIO's way: `{"image", "error", "outputs"}`
    /// as `netrunner run --json` prints it.
    func run(_ request: Request, model id: String) async throws -> Response {
        struct Line: Encodable {
            var image: String
            var model: String
            var error = false
            var outputs: [String: Model.Output]
        }
        let served = try engine.model(id)
        // A detector's description runs as the detector (its outputs are boxes, not TensorIO
        // arrays), as `netrunner run` does.
        if VisionTaskRegistry.definition(for: served.kind)?.runsAsDescribedModel != true {
            return try await answer(request, model: id, task: served.kind)
        }
        let upload = try await ImageUpload.read(request, limit: maximumUploadBytes)
        let outputs = try await engine.outputs(model: id, image: upload.data)
        return HTTPReply.json(Line(image: upload.name, model: id, outputs: outputs))
    }

    /// An upload rendered as a JPEG a browser draws (`POST /v1/render?max=N`), upright, its
    /// longest side at most `max` pixels (``ImageRendering/maximumSide`` by default and at
    /// most): the page shows it in place of a photo the browser cannot decode (HEIC, TIFF).
    func render(_ request: Request) async throws -> Response {
        let longestSide = try ImageRendering.longestSide(request.uri.queryParameters, known: [])
        let upload = try await ImageUpload.read(request, limit: maximumUploadBytes)
        return ImageRendering.response(
            try await engine.render(image: upload.data, longestSide: longestSide, source: upload.name))
    }

    /// Runs one upload through a model's task and answers with a results line.
    func answer(_ request: Request, model id: String, task: ImageTask.Kind) async throws -> Response {
        let served = try engine.model(id)
        guard served.kind == task else { throw RouteFailure.wrongTask(id: id, kind: served.kind, asked: task) }
        let query = request.uri.queryParameters
        let options = try AnswerOptions(query, task: served.kind, also: ["preview"])
        let preview = try AnswerOptions.flag(query, "preview")
        let upload = try await ImageUpload.read(request, limit: maximumUploadBytes)
        let found = try await engine.answerShowingInput(
            served, image: upload.data, options: options.taskOptions, includeInput: preview)
        let answer = options.results.shown(found.answer)
        metrics?.answer(answer, model: id)
        let timing =
            "decode;dur=\(fixedDecimals(answer.decodingMilliseconds, 3)), "
            + "preprocess;dur=\(fixedDecimals(answer.preprocessingMilliseconds, 3)), "
            + "inference;dur=\(fixedDecimals(answer.inferenceMilliseconds, 3))"
        let headers: HTTPFields = [HTTPField.Name.custom("Server-Timing"): timing]
        // The answer as a picture, for a client that asks for one, where the task draws one (a
        // segmenter's mask), with the image's size to scale it by (the picture's is its own).
        if Self.wantsPNG(request.headers), let definition = VisionTaskRegistry.definition(for: served.kind),
            let picture = try definition.picture(answer: answer)
        {
            var headers = headers
            headers[.contentType] = picture.mediaType
            headers[.imageWidth] = String(picture.imageSize.width)
            headers[.imageHeight] = String(picture.imageSize.height)
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: picture.data)))
        }
        return HTTPReply.json(
            PreviewedLine(
                line: ResultsLine(image: upload.name, model: id, answer: answer),
                input: found.input.map { "data:image/png;base64," + $0.base64EncodedString() }),
            headers: headers)
    }

    /// Whether a request's `Accept` names `image/png` first (`Accept: image/png`): a task that
    /// draws its answer (``VisionTaskDefinition/picture(_:)``: a segmenter's category mask) then
    /// answers with it as a PNG; every other answer is JSON whatever it asks.
    static func wantsPNG(_ headers: HTTPFields) -> Bool {
        guard let accept = headers[.accept], accept.utf8.count <= 1024 else { return false }
        let first = accept.split(separator: ",").first?.split(separator: ";").first ?? ""
        return first.filter { $0 != " " && $0 != "\t" }.lowercased() == "image/png"
    }
}

/// The answer options of a request, by the Task Library's and MediaPipe's names.
///
/// `maxResults`, `scoreThreshold`, `categoryAllowlist`, `categoryDenylist` (comma-separated
/// or repeated), and each registered task's own (``TaskAnswerOption``: a segmenter's `mask`,
/// `model` by default or `image`), which its definition reads
/// (``VisionTaskDefinition/apply(answerOptions:to:)``). Another task's own option is checked
/// and otherwise ignored.
struct AnswerOptions {
    /// The options read, the library's.
    var results = ResultOptions()
    /// The tasks' own options given, by name, each value one its option takes.
    var given: [String: String] = [:]
    /// The task the options are for: its definition reads its own options.
    var task: ImageTask.Kind?

    /// The names of the options every task shares.
    static let shared = ["maxResults", "scoreThreshold", "categoryAllowlist", "categoryDenylist"]

    /// The tasks' own options, each name once (the first task to name it; none named as a
    /// shared one).
    ///
    /// - Parameter tasks: The tasks (the registered ones by default).
    /// - Returns: The options.
    static func taskOptions(of tasks: [any VisionTaskDefinition] = VisionTaskRegistry.definitions)
        -> [TaskAnswerOption]
    {
        var seen = Set(shared)
        return tasks.flatMap(\.answerOptions).filter { seen.insert($0.name).inserted }
    }

    /// The defaults: no option given.
    init() {}

    /// Reads the options of a query.
    ///
    /// - Parameters:
    ///   - query: The query parameters.
    ///   - task: The model's task (its definition reads its own options, and sets its defaults).
    ///   - also: Other parameters the route takes (not reported as unknown).
    /// - Throws: ``QueryParameterError`` for a value out of range, an unknown parameter, or one
    ///   given more than once (but for the two lists).
    init(_ query: Parameters, task: ImageTask.Kind?, also: Set<String> = []) throws {
        self.task = task
        results.maxResults = try QueryParameters.wholeNumber("maxResults", in: query, range: 1...10_000)
        if let text = query.get("scoreThreshold") {
            guard let value = Float(text), value.isFinite, (0...1).contains(value) else {
                throw QueryParameterError(description: "scoreThreshold must be a number from 0 to 1, not \"\(text)\".")
            }
            results.scoreThreshold = value
        }
        func list(_ name: String) -> [String] {
            query.getAll(name).flatMap { $0.split(separator: ",").map(String.init) }.filter { !$0.isEmpty }
        }
        results.categoryAllowlist = list("categoryAllowlist")
        results.categoryDenylist = list("categoryDenylist")
        if !results.categoryAllowlist.isEmpty, !results.categoryDenylist.isEmpty {
            throw QueryParameterError(description: "categoryAllowlist and categoryDenylist cannot be used together.")
        }
        let own = Self.taskOptions()
        for option in own {
            guard let text = query.get(option.name) else { continue }
            do {
                given[option.name] = try option.checked(text)
            } catch {
                throw QueryParameterError(description: error.description)
            }
        }
        let names = Self.shared + own.map(\.name)
        for name in query.map({ String($0.key) }) where !names.contains(name) && !also.contains(name) {
            throw QueryParameterError(
                description: "Unknown query parameter \"\(name)\": the answer options are "
                    + names.dropLast().joined(separator: ", ") + " and " + (names.last ?? "") + ".")
        }
        // The lists may be repeated (`categoryAllowlist=a&categoryAllowlist=b`); any other
        // parameter once (`mask=image&mask=model` was answered with one of them).
        try QueryParameters.refuseRepeated(query, lists: ["categoryAllowlist", "categoryDenylist"])
    }

    /// A yes-or-no query parameter (`preview=1`): absent, `0` or `false` is no; `1` or `true` yes.
    ///
    /// - Throws: ``QueryParameterError`` for another value.
    static func flag(_ query: Parameters, _ name: String) throws -> Bool {
        guard let text = query.get(name) else { return false }
        switch text {
        case "1", "true": return true
        case "0", "false": return false
        default: throw QueryParameterError(description: "\(name) must be 1 or 0, not \"\(text)\".")
        }
    }

    /// The task options these ask for: the shared ones, and what the task's definition makes of
    /// its own (a segmenter's mask at the model's resolution unless `mask=image`; other tasks'
    /// options never name a mask, so a classifier's stay the engine's defaults, which its
    /// batcher takes).
    var taskOptions: ImageTask.Options {
        var options = ImageTask.Options()
        options.results = results
        if let task, let definition = VisionTaskRegistry.definition(for: task) {
            let names = Set(definition.answerOptions.map(\.name))
            definition.apply(answerOptions: given.filter { names.contains($0.key) }, to: &options)
        }
        return options
    }
}

/// A results line and, with `preview=1`, what the model saw: its input as a PNG data URL in
/// `input` (the page's "What the model sees").
struct PreviewedLine: Encodable {
    var line: ResultsLine
    var input: String?

    enum Key: String, CodingKey { case input }

    func encode(to encoder: any Encoder) throws {
        try line.encode(to: encoder)
        guard let input else { return }
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(input, forKey: .input)
    }
}

/// `GET /v1/models`.
struct ModelList: Encodable {
    var models: [ModelInfo]
}

/// What `GET /v1/models/{id}` says of a model.
struct ModelInfo: Encodable {
    struct TensorInfo: Encodable {
        var name: String
        var dtype: String
        var shape: [Int]
    }

    struct Preprocessing: Encodable {
        var width: Int
        var height: Int
        var crop: String
        var channelOrder: String
        var normalization: ImagePreprocessing.Normalization?

        enum CodingKeys: String, CodingKey {
            case width, height, crop, normalization
            case channelOrder = "channel_order"
        }
    }

    var id: String
    var name: String
    var type: String
    var task: String
    /// The task's route: `POST /v1/models/{id}/<verb>` (`classify`, `detect`, `pose`, `segment`...).
    var verb: String?
    var origin: String
    var state: String
    var reason: String?
    var inputs: [TensorInfo]?
    var outputs: [TensorInfo]?
    var preprocessing: Preprocessing?
    var labels: Int?
    /// What the model runs on: `cpu` or `gpu`.
    var accelerator: String?
    /// Whether every operator runs there.
    var fullyAccelerated: Bool?

    enum CodingKeys: String, CodingKey {
        case id, name, type, task, verb, origin, state, reason, inputs, outputs, preprocessing, labels, accelerator
        case fullyAccelerated = "fully_accelerated"
    }

    /// - Parameters:
    ///   - served: The model.
    ///   - engine: The engine serving it.
    ///   - showsPath: Whether `origin` (and a failure's reason) may hold the model's path on this
    ///     machine; else only its file name.
    init(_ served: ServedModel, engine: InferenceEngine, showsPath: Bool = false) {
        id = served.id
        name = served.model.description?.name ?? served.model.metadata?.name ?? served.id
        type = served.model.description?.model.type ?? "image.\(served.kind.rawValue)"
        task = served.kind.rawValue
        verb = VisionTaskRegistry.definition(for: served.kind)?.verb
        let fileName = served.origin.split(separator: "/").last.map(String.init) ?? served.origin
        origin = showsPath ? served.origin : fileName
        switch engine.state(of: served.id) {
        case .ready: state = "ready"
        case .unloaded: state = "unloaded"
        case .failed(let why):
            state = "failed"
            reason = served.failureReason(why, showsPath: showsPath)
        default: state = "loading"
        }
        guard let details = engine.details(of: served.id) else { return }
        let info = { (tensor: Tensor) in
            TensorInfo(name: tensor.name, dtype: "\(tensor.dataType)", shape: tensor.shape.dimensions)
        }
        inputs = details.inputs.map(info)
        outputs = details.outputs.map(info)
        let preprocessing = details.preprocessing
        self.preprocessing = Preprocessing(
            width: preprocessing.size.width, height: preprocessing.size.height,
            crop: preprocessing.cropping == .centerSquare ? "center" : preprocessing.cropping.rawValue,
            channelOrder: preprocessing.channelOrder.rawValue, normalization: preprocessing.normalization)
        labels = details.labels?.count
        accelerator = details.accelerator.rawValue
        fullyAccelerated = details.isFullyAccelerated
    }
}
