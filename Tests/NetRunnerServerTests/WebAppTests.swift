import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import NetRunner
import NetRunnerEngine
import NetRunnerHTTP
import NetRunnerImage
import NetRunnerTestSupport
import Testing

@testable import NetRunnerServer

/// The web page's files and what the page asks of the native API, in process (issue 25: the
/// picked photo's "What the model sees" was a broken image; issue 24: the page is real files
/// compiled into the binary). The page itself runs in Chromium in `ServeCommandTests.browser`.
@Suite("Web app: its files, and a picked photo's preview")
struct WebAppTests {
    @Test("/, /app.js, /tasks.js, /app.css and /favicon.ico are the files of Resources/, byte for byte")
    func files() async throws {
        let router = Router()
        router.add(middleware: FailureMiddleware<BasicRequestContext>())
        WebApp.routes.register(on: router)
        try await Application(router: router).test(.router) { client in
            for (route, file, type) in [
                ("/", "index.html", "text/html"), ("/app.js", "app.js", "text/javascript"),
                ("/tasks.js", "tasks.js", "text/javascript"),
                ("/app.css", "app.css", "text/css"), ("/favicon.ico", "favicon.svg", "image/svg+xml"),
            ] {
                let expected = try Data(
                    contentsOf: URL(fileURLWithPath: Fixtures.path("Sources/NetRunnerServer/Resources/" + file)))
                try await client.execute(uri: route, method: .get) { response in
                    #expect(response.status == .ok, "\(route)")
                    #expect(response.headers[.contentType]?.hasPrefix(type) == true, "\(route)")
                    #expect(Data(response.body.readableBytesView) == expected, "\(route)")
                }
            }
        }
    }

    @Test("classify?preview=1 adds the model's input as a 224x224 PNG; without it, no input; other values are 400")
    func preview() async throws {
        let model = ServedModel(
            id: "mobilenet", model: try LoadedModel(.path(Fixtures.path(Fixtures.MobileNet.uint8))), origin: "test")
        let engine = InferenceEngine(models: [model], configuration: .init(threads: 1))
        defer { Task { await engine.shutdown() } }
        try await InProcessServer.started(engine, ready: false)
        let router = Router()
        router.add(middleware: FailureMiddleware<BasicRequestContext>())
        NativeRoutes(engine: engine, maximumUploadBytes: 1 << 20).routes.register(on: router)
        let photo = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")))
        try await Application(router: router).test(.router) { client in
            func classify(_ query: String) async throws -> (status: HTTPResponse.Status, json: [String: Any]) {
                try await client.execute(
                    uri: "/v1/models/mobilenet/classify" + query, method: .post,
                    headers: [.contentType: "image/jpeg"], body: ByteBuffer(bytes: photo)
                ) { response in
                    (
                        response.status,
                        (try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)))
                            as? [String: Any] ?? [:]
                    )
                }
            }
            let (status, json) = try await classify("?preview=1")
            #expect(status == .ok)
            let top = ((json["inference_results"] as? [String: Any])?["classification"] as? [[String: Any]])?.first
            #expect(top?["index"] as? Int == 967)  // espresso (the bare model file has no labels)
            let input = try #require(json["input"] as? String)
            let prefix = "data:image/png;base64,"
            #expect(input.hasPrefix(prefix))
            let png = try #require(Data(base64Encoded: String(input.dropFirst(prefix.count))))
            let seen = try PixelBuffer(data: png)
            #expect(seen.width == 224 && seen.height == 224)
            let plain = try await classify("")
            #expect(plain.status == .ok && plain.json["input"] == nil)
            #expect(try await classify("?preview=0").json["input"] == nil)
            let bad = try await classify("?preview=yes")
            #expect(bad.status == .badRequest)
            #expect((bad.json["error_description"] as? String)?.contains("preview must be 1 or 0") == true)
        }
    }
}
