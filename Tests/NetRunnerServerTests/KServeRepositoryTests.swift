import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import NetRunner
import NetRunnerEngine
import NetRunnerHTTP
import NetRunnerSupport
import NetRunnerTestSupport
import Testing

@testable import NetRunnerServer

/// Triton's model configuration (`/v2/models/{name}/config`) and model repository index
/// (`/v2/repository/index`) in process, on real models (issue 25: both were 404 with an empty
/// body, which the Triton client reports as "client received an empty response"). The
/// spawned server's test with the real Triton client is `ServeCommandTests.tritonClient`.
@Suite("KServe model configuration and repository index")
struct KServeRepositoryTests {
    /// An engine serving the float32 MobileNet (ready) and a model that is no image model
    /// (unavailable), once both are settled.
    static func engine() async throws -> InferenceEngine {
        let models = try [
            ServedModel(
                id: "mobilenet", model: LoadedModel(.path(Fixtures.path(Fixtures.MobileNet.float32))), origin: "test"),
            ServedModel(
                id: "half", model: LoadedModel(.path(Fixtures.path(Fixtures.Synthetic.float16Input))), origin: "test"),
        ]
        let engine = InferenceEngine(models: models, configuration: .init(threads: 2))
        try await InProcessServer.started(engine)
        return engine
    }

    /// A request's status and JSON body.
    static func call(
        _ client: some TestClientProtocol, _ uri: String, method: HTTPRequest.Method = .get, body: String? = nil
    ) async throws -> (status: Int, json: Any?) {
        try await client.execute(uri: uri, method: method, body: body.map { ByteBuffer(string: $0) }) { response in
            (Int(response.status.code), try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)))
        }
    }

    @Test(
        "A configuration names the tensors with Triton's TYPE_ names and whole shapes; the index gives every model's state"
    )
    func configurationAndIndex() async throws {
        let engine = try await Self.engine()
        let router = Router()
        router.add(middleware: FailureMiddleware<BasicRequestContext>())
        KServeRoutes(engine: engine, maximumUploadBytes: 1 << 20, version: "test").routes.register(on: router)
        try await Application(router: router).test(.router) { client in
            let (status, json) = try await Self.call(client, "/v2/models/mobilenet/config")
            let config = try #require(json as? [String: Any])
            #expect(status == 200)
            #expect(config["name"] as? String == "mobilenet" && config["platform"] as? String == "tensorflow_lite")
            #expect(config["backend"] as? String == "tflite" && config["max_batch_size"] as? Int == 0)
            let input = try #require((config["input"] as? [[String: Any]])?.first)
            #expect(
                input["name"] as? String == "serving_default_image:0" && input["format"] as? String == "FORMAT_NONE")
            #expect(input["data_type"] as? String == "TYPE_FP32" && input["dims"] as? [Int] == [1, 224, 224, 3])
            let output = try #require((config["output"] as? [[String: Any]])?.first)
            #expect(output["data_type"] as? String == "TYPE_FP32" && output["dims"] as? [Int] == [1, 1000])
            #expect(((config["instance_group"] as? [[String: Any]])?.first?["count"] as? Int) == 2)
            let versioned = try await Self.call(client, "/v2/models/mobilenet/versions/1/config")
            #expect(versioned.status == 200 && (versioned.json as? [String: Any])?["name"] as? String == "mobilenet")

            let unknown = try await Self.call(client, "/v2/models/nope/config")
            #expect(unknown.status == 404)
            #expect(((unknown.json as? [String: Any])?["error"] as? String)?.contains("No model \"nope\"") == true)
            let failed = try await Self.call(client, "/v2/models/half/config")
            #expect(failed.status == 503)
            #expect(((failed.json as? [String: Any])?["error"] as? String)?.contains("not an image model") == true)
            let version = try await Self.call(client, "/v2/models/mobilenet/versions/2/config")
            #expect(version.status == 404)
            #expect(((version.json as? [String: Any])?["error"] as? String)?.contains("no version \"2\"") == true)
            #expect(try await Self.call(client, "/v2/models/mobilenet/versions/2").status == 404)
            #expect(try await Self.call(client, "/v2/models/mobilenet/versions/2/ready").status == 503)
            #expect(try await Self.call(client, "/v2/models/mobilenet/versions/1/ready").status == 200)

            // Every model, in the order served; the one that failed says why.
            for (method, body) in [
                (HTTPRequest.Method.post, ""), (.post, "{}"), (.post, #"{"ready": false}"#), (.get, nil),
            ] {
                let index = try await Self.call(client, "/v2/repository/index", method: method, body: body)
                let entries = try #require(index.json as? [[String: String]], "\(method) \(body ?? "")")
                #expect(index.status == 200 && entries.map { $0["name"] } == ["mobilenet", "half"])
                #expect(entries.first == ["name": "mobilenet", "version": "1", "state": "READY", "reason": ""])
                #expect(
                    entries.last?["state"] == "UNAVAILABLE"
                        && entries.last?["reason"]?.contains("not an image model") == true)
            }
            let ready = try await Self.call(client, "/v2/repository/index", method: .post, body: #"{"ready": true}"#)
            #expect((ready.json as? [[String: String]])?.map { $0["name"] } == ["mobilenet"])
            for body in ["{", #"{"ready": "yes"}"#, #"{"ready": null}"#, "[]", "null"] {
                let refused = try await Self.call(client, "/v2/repository/index", method: .post, body: body)
                #expect(refused.status == 400, "\(body)")
                #expect(((refused.json as? [String: Any])?["error"] as? String)?.contains("ready") == true, "\(body)")
            }
            let metadata = try #require(try await Self.call(client, "/v2").json as? [String: Any])
            #expect((metadata["extensions"] as? [String])?.contains("model_configuration") == true)
        }
        await engine.shutdown()
    }

    @Test("A failed model's path shows only to a request with a key, on the open routes as on /v1/models")
    func failedModelPaths() async throws {
        let path = Fixtures.path(Fixtures.Synthetic.float16Input)
        let folder = String(path[...path.lastIndex(of: "/")!])
        let models = [ServedModel(id: "half", model: try LoadedModel(.path(path)), origin: path)]
        let engine = InferenceEngine(models: models, configuration: .init(threads: 1))
        try await InProcessServer.started(engine, ready: false)
        guard case .failed(let why) = engine.state(of: "half") else { throw CancellationError() }
        #expect(why.contains(folder), "the engine's own reason names the path: \(why)")
        let access = ServerAccess(
            keys: ["k3y"], browsers: BrowserGuard(origins: [], allowedHosts: [], bindHost: "127.0.0.1"))
        let router = Router()
        router.add(middleware: FailureMiddleware<BasicRequestContext>())
        KServeRoutes(engine: engine, maximumUploadBytes: 1 << 20, version: "test", access: access).routes
            .register(on: router)
        try await Application(router: router).test(.router) { client in
            for (uri, keyed) in [
                ("/v2/repository/index", false), ("/v2/models/half/config", false), ("/v2/repository/index", true),
                ("/v2/models/half/config", true), ("/v2/models/half/infer", false),
            ] {
                let headers: HTTPFields = keyed ? [.authorization: "Bearer k3y"] : [:]
                let method: HTTPRequest.Method = uri.hasSuffix("infer") ? .post : .get
                let body = method == .post ? ByteBuffer(string: #"{"inputs": []}"#) : nil
                let text = try await client.execute(uri: uri, method: method, headers: headers, body: body) {
                    String(buffer: $0.body)
                }
                // Before the fix the open routes gave every client the model's absolute path.
                #expect(text.contains(folder) == keyed, "\(uri) keyed: \(keyed): \(text)")
                #expect(text.contains("float16_input.tflite") || text.contains("half"), "\(uri): \(text)")
            }
        }
        await engine.shutdown()
    }
}
