import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NetRunnerHTTP
import Testing

@testable import NetRunnerServer

/// The server's route table, written once (issue 24: it was written four times): the OpenAPI
/// document is checked against it, paths are matched to templates as the router matches them,
/// and another method is 405 with `Allow`.
@Suite("Route table")
struct RouteTableTests {
    /// Each path of an OpenAPI document with its methods.
    static func documented(_ document: String) throws -> [String: Set<String>] {
        let json = try #require(try JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any])
        let paths = try #require(json["paths"] as? [String: [String: Any]])
        return paths.mapValues { Set($0.keys.map { $0.uppercased() }.filter { $0 != "PARAMETERS" }) }
    }

    @Test("Every path and method of /openapi.json is in the table, with that method")
    func documentMatchesTable() throws {
        for (path, methods) in try Self.documented(OpenAPIDocument.document) {
            let allowed = Set((ServerRoutes.table.allowed[path] ?? "").split(separator: ", ").map(String.init))
            #expect(methods.isSubset(of: allowed), "\(path): documented \(methods), table \(allowed)")
        }
    }

    @Test("Paths match their templates as the router matches them: empty segments skipped, literals first")
    func templates() {
        let table = ServerRoutes.table
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
        router.add(middleware: MethodMiddleware<BasicRequestContext>(routes: ServerRoutes.table))
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
        router.add(middleware: MethodMiddleware<BasicRequestContext>(routes: ServerRoutes.table))
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
