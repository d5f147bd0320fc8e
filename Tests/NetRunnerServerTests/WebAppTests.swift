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
    @Test("/, its four scripts, /app.css and /favicon.ico are the files of Resources/, byte for byte")
    func files() async throws {
        let router = Router()
        router.add(middleware: FailureMiddleware<BasicRequestContext>())
        WebApp.routes.register(on: router)
        try await Application(router: router).test(.router) { client in
            for (route, file, type) in [
                ("/", "index.html", "text/html"), ("/app.js", "app.js", "text/javascript"),
                ("/tasks.js", "tasks.js", "text/javascript"), ("/album.js", "album.js", "text/javascript"),
                ("/streams.js", "streams.js", "text/javascript"),
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

    @Test("/formats.js is ImageFormat's table as the page reads it: extensions, MIME types, whether browsers draw")
    func formats() async throws {
        let router = Router()
        WebApp.routes.register(on: router)
        try await Application(router: router).test(.router) { client in
            try await client.execute(uri: "/formats.js", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType]?.hasPrefix("text/javascript") == true)
                let script = String(buffer: response.body)
                let start = try #require(script.range(of: "const photoFormats = "))
                let json = try #require(script[start.upperBound...].split(separator: ";\n").first)
                struct Format: Decodable, Equatable {
                    var name: String
                    var extensions: [String]
                    var mimeTypes: [String]
                    var browserDraws: Bool
                }
                let decoder = JSONDecoder()
                decoder.keyDecodingStrategy = .convertFromSnakeCase
                let formats = try decoder.decode([Format].self, from: Data(json.utf8))
                #expect(
                    formats
                        == ImageFormat.allCases.map {
                            Format(
                                name: $0.rawValue, extensions: $0.fileExtensions,
                                mimeTypes: [$0.mimeType] + $0.otherMIMETypes, browserDraws: $0.browserDraws)
                        })
                #expect(formats.filter { !$0.browserDraws }.map(\.name) == ["PNM", "TIFF", "HEIF"])
                // The page reads these names (app.js: format.browser_draws, format.mime_types).
                #expect(script.contains("\"browser_draws\":false") && script.contains("\"mime_types\":["))
            }
        }
        // The page loads the table before the scripts that read it, and keeps no list of its own.
        let page = String(decoding: PackageResources.index_html, as: UTF8.self)
        let table = try #require(page.range(of: "<script src=\"/formats.js\"></script>"))
        #expect(table.upperBound <= (page.range(of: "<script src=\"/app.js\">")?.lowerBound ?? page.startIndex))
        let app = String(decoding: PackageResources.app_js, as: UTF8.self)
        #expect(app.contains("photoFormats") && !app.contains("heic") && !page.contains(".heic"))
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
