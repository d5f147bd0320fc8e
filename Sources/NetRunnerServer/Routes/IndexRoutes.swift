import FoundationEssentials
import Hummingbird
import NetRunner
import NetRunnerEngine
import NetRunnerHTTP
import NetRunnerSupport

/// Similar photos from the server: the indexes of `serve --index NAME=FILE`.
///
/// The indexes (made by `netrunner similar index`) are listed at `GET /v1/indexes` and searched
/// with a photo at `POST /v1/indexes/{name}/search?k=5`. The photo is embedded by the index's
/// own model, which the server serves; the answer is the `k` nearest photos of the index, most
/// alike first, from the index as it is when the search starts (a new version of its file
/// replaces it: ``ServedIndexes``).
struct IndexRoutes {
    let engine: InferenceEngine
    /// The indexes, by name.
    let indexes: ServedIndexes
    let maximumUploadBytes: Int

    /// The most photos one search answers.
    static let maximumK = 1000

    /// The routes.
    var routes: RouteList<BasicRequestContext> {
        var routes = RouteList<BasicRequestContext>()
        routes.get("/v1/indexes", .open, .operation("listIndexes")) { _, _ in
            HTTPReply.json(
                IndexList(
                    indexes: indexes.names.compactMap { name in
                        indexes.index(named: name).map {
                            IndexList.Entry(
                                name: name, model: $0.model, count: $0.index.count, dimension: $0.index.dimension)
                        }
                    }))
        }
        routes.post("/v1/indexes/{name}/search", .keyed, .operation("searchIndex")) { request, context in
            try await search(request, name: context.parameters.get("name") ?? "")
        }
        return routes
    }

    /// The `k` (1 to ``maximumK``, 5 by default) of a search's query; any other parameter is refused.
    ///
    /// - Parameter query: The request's query parameters.
    /// - Returns: How many photos to answer.
    /// - Throws: ``QueryParameterError`` for another value, or another parameter.
    static func k(_ query: Parameters) throws(QueryParameterError) -> Int {
        try QueryParameters.refuseUnknown(query, known: ["k"])
        return try QueryParameters.wholeNumber("k", in: query, range: 1...maximumK) ?? 5
    }

    /// Embeds the upload with the index's model and answers its nearest photos.
    func search(_ request: Request, name: String) async throws -> Response {
        guard let served = indexes.index(named: name) else {
            throw RouteFailure(
                .notFound,
                "No index named \"\(name.prefix(64))\": GET /v1/indexes lists them (serve --index NAME=FILE).")
        }
        let k = try Self.k(request.uri.queryParameters)
        let upload = try await ImageUpload.read(request, limit: maximumUploadBytes)
        let found = try await engine.answerShowingInput(model: served.model, image: upload.data, includeInput: false)
        guard case .other(let result) = found.answer, let embedding = result as? EmbeddingResult else {
            throw RouteFailure(.failed, "The index's model \"\(served.model)\" did not answer with an embedding.")
        }
        let matches = try served.index.search(embedding.embedding, k: k, excluding: nil)
        return HTTPReply.json(
            SearchAnswer(
                image: upload.name, index: name, model: served.model,
                matches: matches.map { .init(path: $0.path, similarity: $0.similarity) },
                decodeLatency: embedding.decodingMilliseconds, preprocessorLatency: embedding.preprocessingMilliseconds,
                inferenceLatency: embedding.inferenceMilliseconds))
    }

    /// `GET /v1/indexes`.
    struct IndexList: Encodable {
        struct Entry: Encodable {
            var name: String
            var model: String
            var count: Int
            var dimension: Int
        }
        var indexes: [Entry]
    }

    /// A search's answer.
    struct SearchAnswer: Encodable {
        struct Match: Encodable {
            var path: String
            var similarity: Float
        }
        var image: String
        var index: String
        var model: String
        var matches: [Match]
        var decodeLatency: Double
        var preprocessorLatency: Double
        var inferenceLatency: Double

        enum CodingKeys: String, CodingKey {
            case image, index, model, matches
            case decodeLatency = "decode_latency"
            case preprocessorLatency = "preprocessor_latency"
            case inferenceLatency = "inference_latency"
        }
    }
}
