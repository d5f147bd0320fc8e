import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NetRunnerEngine
import NetRunnerHTTP
import Testing

@testable import NetRunnerServer

/// The server's routes, each declared once (issue 34; issue 24 had them written four times):
/// the OpenAPI document, the 405 table and the access rule are derived from the route list, and
/// checked here against the composed server in process.
@Suite("Route list")
struct RouteTableTests {
    /// The served document's operations, `"GET /v1/models"`.
    static func documented(_ document: String) throws -> Set<String> {
        let json = try #require(try JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any])
        let paths = try #require(json["paths"] as? [String: [String: Any]])
        return Set(paths.flatMap { path, item in item.keys.map { "\($0.uppercased()) \(path)" } })
    }

    @Test("The OpenAPI document's paths are exactly the routes that name an operation; the rest are listed")
    func documentMatchesRoutes() async throws {
        // Each registered task adds its verb's route, and "Adding a task" registers one in this
        // process: registered first, so that it cannot land between the list read here and the
        // router built below (under load it did, and the document had a route the list had not).
        _ = AddingATaskTests.registered
        let routes = try InProcessServer.routes()
        var named = Set<String>()
        var elsewhere = Set<String>()
        for route in routes.routes {
            switch route.documentation {
            case .operation: named.insert("\(route.method) \(route.template)")
            case .elsewhere: elsewhere.insert("\(route.method) \(route.template)")
            }
        }
        let engine = InferenceEngine(models: [], configuration: .init(threads: 1))
        let expected = named
        try await InProcessServer.test(engine: engine) { client in
            let document = try await client.execute(uri: "/openapi.json", method: .get) { String(buffer: $0.body) }
            #expect(try Self.documented(document) == expected)
        }
        // Before issue 34 the versioned config and stats were registered but in no document.
        #expect(named.contains("GET /v2/models/{name}/versions/{version}/config"))
        #expect(named.contains("GET /v2/models/{name}/versions/{version}/stats"))
        // Described elsewhere on purpose (KServe v2's specification, the page, Prometheus): a new
        // route goes into the document, or here.
        #expect(
            elsewhere == [
                "GET /v2", "GET /v2/models/{name}", "GET /v2/models/{name}/ready", "POST /v2/models/{name}/infer",
                "GET /v2/models/{name}/versions/{version}", "GET /v2/models/{name}/versions/{version}/ready",
                "POST /v2/models/{name}/versions/{version}/infer", "GET /v1/live", "GET /metrics",
                "GET /openapi.json", "GET /", "GET /app.js", "GET /tasks.js", "GET /album.js", "GET /streams.js",
                "GET /app.css", "GET /formats.js", "GET /favicon.ico",
            ])
    }

    @Test("Every other method of every route is 405 with its Allow, the versioned KServe routes too")
    func everyRouteRefusesOtherMethods() async throws {
        let table = try InProcessServer.routes().table
        // Before issue 34: 404 (the four versioned routes were in no table).
        for template in [
            "/v2/models/{name}/versions/{version}", "/v2/models/{name}/versions/{version}/ready",
            "/v2/models/{name}/versions/{version}/infer", "/v2/models/{name}/versions/{version}/config",
        ] {
            #expect(table.allowed[template] != nil, "\(template)")
        }
        let engine = InferenceEngine(models: [], configuration: .init(threads: 1))
        try await InProcessServer.test(engine: engine) { client in
            for (template, allow) in table.allowed {
                for method in [HTTPRequest.Method.get, .post, .put, .delete] where !allow.contains(method.rawValue) {
                    try await client.execute(uri: InProcessServer.path(template), method: method) { response in
                        #expect(response.status == .methodNotAllowed, "\(method) \(template)")
                        #expect(response.headers[.allow] == allow, "\(method) \(template)")
                    }
                }
            }
        }
    }

    @Test("On a keyed server each route's declared access holds: open ones answer, keyed ones are 401")
    func declaredAccessHolds() async throws {
        let engine = InferenceEngine(models: [], configuration: .init(threads: 1))
        let routes = try InProcessServer.routes(engine: engine)
        try await InProcessServer.test(engine: engine, configuration: .init(apiKeys: ["k3y"])) { client in
            for route in routes.routes {
                let status = try await client.execute(
                    uri: InProcessServer.path(route.template), method: route.method
                ) { $0.status }
                if route.access == .open {
                    #expect(status != .unauthorized, "\(route.method) \(route.template)")
                } else {
                    #expect(status == .unauthorized, "\(route.method) \(route.template)")
                }
            }
            // With the key the keyed routes are reached (the live route says it is a WebSocket).
            try await client.execute(
                uri: "/v1/live", method: .get, headers: [.authorization: "Bearer k3y"]
            ) { response in
                #expect(response.status == .upgradeRequired && response.headers[.upgrade] == "websocket")
            }
        }
    }

    @Test("Paths match their templates as the router matches them: empty segments skipped, literals first")
    func templates() throws {
        let table = try InProcessServer.routes().table
        for template in table.allowed.keys {
            let path = template.replacing(/\{[a-z]+\}/, with: "x1")
            #expect(table.template(for: path) == template, "\(path)")
            #expect(table.template(for: "/" + path.replacing("/", with: "//")) == template, "\(path)")
        }
        #expect(table.template(for: "/v2/health/ready") == "/v2/health/ready")
        #expect(table.template(for: "/v1/models/x/nothing") == nil)
        #expect(table.template(for: "/v1/models/x/classify/more") == nil)
    }

    @Test(
        "Another method on a known route is 405 with Allow; HEAD is not refused where GET is taken; unknown paths pass")
    func methods() async throws {
        let router = Router()
        router.add(middleware: MethodMiddleware<BasicRequestContext>(routes: try InProcessServer.routes().table))
        router.get("/v1/models") { _, _ in "listed" }
        try await Application(router: router).test(.router) { client in
            try await client.execute(uri: "//v1/models/m/classify", method: .delete) { response in
                #expect(response.status == .methodNotAllowed && response.headers[.allow] == "POST")
            }
            try await client.execute(uri: "/v1/models", method: .get) { response in
                #expect(response.status == .ok)
            }
            // HEAD is not refused where GET is taken (what answers it is the router's).
            try await client.execute(uri: "/v1/models", method: .head) { response in
                #expect(response.status != .methodNotAllowed)
            }
            try await client.execute(uri: "/v1/models/m/nothing", method: .delete) { response in
                #expect(response.status == .notFound)
            }
        }
    }

    @Test("An unknown route is 404 with a JSON body: KServe's {\"error\"} under /v2, the server's own elsewhere")
    func unknownRoutes() async throws {
        let router = Router()
        router.add(middleware: MethodMiddleware<BasicRequestContext>(routes: try InProcessServer.routes().table))
        router.get("/v1/models/{id}") { _, _ -> String in throw HTTPError(.notFound, message: "no model") }
        try await Application(router: router).test(.router) { client in
            // Before the fix: an empty body ("client received an empty response" in Triton's client).
            try await client.execute(uri: "/v2/models/m/nothing", method: .get) { response in
                #expect(response.status == .notFound)
                let json = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))
                #expect(
                    (json as? [String: Any])?["error"] as? String
                        == "No route /v2/models/m/nothing here; GET /openapi.json lists the routes.")
            }
            try await client.execute(uri: "/v1/nothing", method: .get) { response in
                #expect(response.status == .notFound)
                let json = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))
                #expect(
                    (json as? [String: Any])?["error_description"] as? String
                        == "No route /v1/nothing here; GET /openapi.json lists the routes.")
            }
            // A known route's own 404 is its own.
            try await client.execute(uri: "/v1/models/m", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(String(buffer: response.body).contains("no model"))
            }
        }
    }
}
