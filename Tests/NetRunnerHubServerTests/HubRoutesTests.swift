import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NetRunnerHTTP
import NetRunnerSupport
import NetRunnerTestSupport
import Testing

@testable import NetRunnerHubServer

/// `hub serve`'s routes in process, on its SQLite store in a fresh data folder (issue 24: the
/// hub had no test target; `netrunnerTests` reach it by spawning the binary, and still do for
/// uploads, which run the model in a child process, PostgreSQL and nginx).
@Suite("Hub routes in process")
struct HubRoutesTests {
    static let admin = "admin-key-for-tests"

    /// A hub on a fresh data folder with one model `m` of two versions (their files stored as
    /// blobs, as an upload leaves them), and a test client against its router.
    static func withHub(
        _ body: @Sendable (any TestClientProtocol, _ digests: [String]) async throws -> Void
    ) async throws {
        let unchanged: (inout HubServer.Configuration) -> Void = { _ in }
        try await withHub(configure: unchanged) { client, _, _, digests in try await body(client, digests) }
    }

    /// ``withHub(_:)`` with the configuration changed first, and the store handed to `body` too.
    static func withHub(
        configure: (inout HubServer.Configuration) -> Void,
        _ body: @Sendable (any TestClientProtocol, HubStore, HubServer, _ digests: [String]) async throws -> Void
    ) async throws {
        let folder = try TemporaryFolder(prefix: "netrunner-hub-routes")
        defer { folder.remove() }
        let logger = Logger(label: "test")
        var configuration = HubServer.Configuration(dataFolder: folder.url.path, adminKey: admin)
        configure(&configuration)
        let hub = HubServer(configuration: configuration, logger: logger)
        // The application `hub serve` runs, on a store the test keeps hold of (its link closed
        // by the application when it stops).
        let database = try await HubDatabase.openSQLite(folder: folder.url.path, logger: logger)
        let store = HubStore(database: database.database, logger: logger)
        var files: [(path: String, digest: String, size: Int)] = []
        for version in 1...2 {
            let bytes = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 * version) })
            files.append(
                (try folder.write(bytes, named: "upload-\(version)"), SHA256.hexDigest(of: bytes), bytes.count))
        }
        let uploads = files
        do {
            let blobs: any BlobStore = try FileBlobStore(dataFolder: folder.url.path)
            try await hub.buildApplication(store: store, database: database).test(.router) { client in
                // The tables were made before the first request, as before the server accepts.
                for file in uploads {
                    try await blobs.put(movingFile: file.path, sha256: file.digest)
                    _ = try await store.publish(
                        name: "m", sha256: file.digest, size: file.size, format: "tflite", task: "classification",
                        modelID: "m", description: "test", by: "admin", alias: nil)
                }
                try await body(client, store, hub, uploads.map(\.digest))
            }
        } catch {
            try? await database.close()
            throw error
        }
        // The application closed its link when it stopped.
        #expect(database.isClosed)
    }

    /// A request's status, headers and body.
    static func call(
        _ client: some TestClientProtocol, _ uri: String, method: HTTPRequest.Method = .get,
        headers: HTTPFields = [:], body: String? = nil
    ) async throws -> (status: Int, headers: HTTPFields, body: Data) {
        try await client.execute(
            uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) }
        ) { response in
            (Int(response.status.code), response.headers, Data(response.body.readableBytesView))
        }
    }

    static func json(_ data: Data) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    }

    static let adminHeaders: HTTPFields = [.authorization: "Bearer \(admin)"]

    @Test("Health, the page, the OpenAPI document; 405 with Allow for another method")
    func basics() async throws {
        try await Self.withHub { client, _ in
            let health = try await Self.call(client, "/v1/health")
            // Which build answers: the release and the commit, as --version says it.
            #expect(health.status == 200 && Self.json(health.body)["version"] as? String == BuildVersion.description)
            let page = try await Self.call(client, "/")
            #expect(page.status == 200 && page.headers[.contentType]?.hasPrefix("text/html") == true)
            #expect(Self.json(try await Self.call(client, "/openapi.json").body)["openapi"] as? String != nil)
            let wrong = try await Self.call(client, "/v1/health", method: .post)
            #expect(wrong.status == 405 && wrong.headers[.allow] != nil)
        }
    }

    @Test("Resolve: the latest, a number, a digest; strong ETag and 304; the blob whole and by Range")
    func resolveAndBlobs() async throws {
        try await Self.withHub { client, digests in
            let latest = try await Self.call(client, "/v1/models/m/resolve")
            let found = Self.json(latest.body)
            #expect(latest.status == 200 && found["version"] as? Int == 2 && found["sha256"] as? String == digests[1])
            #expect(latest.headers[.eTag] == "\"sha256:\(digests[1])\"")
            let unchanged = try await Self.call(
                client, "/v1/models/m/resolve", headers: [.ifNoneMatch: "\"sha256:\(digests[1])\""])
            #expect(unchanged.status == 304)
            #expect(Self.json(try await Self.call(client, "/v1/models/m/resolve?ref=1").body)["version"] as? Int == 1)
            let byDigest = try await Self.call(client, "/v1/models/m/resolve?ref=sha256:\(digests[0])")
            #expect(Self.json(byDigest.body)["version"] as? Int == 1)
            #expect(try await Self.call(client, "/v1/models/m/resolve?ref=3").status == 404)
            let download = try #require(found["download"] as? String)
            let whole = try await Self.call(client, download)
            #expect(whole.status == 200 && SHA256.hexDigest(of: whole.body) == digests[1])
            let part = try await Self.call(client, download, headers: [.range: "bytes=99990-"])
            #expect(part.status == 206 && part.body == whole.body.suffix(10))
            #expect(try await Self.call(client, download, headers: [.range: "bytes=200000-"]).status == 416)
        }
    }

    @Test(
        "Aliases: a staged rollout's weights are whole percents adding to 100; Int.max, 0 and -1 are 400, never a crash"
    )
    func aliases() async throws {
        try await Self.withHub { client, _ in
            let staged = try await Self.call(
                client, "/v1/models/m/aliases/canary", method: .put, headers: Self.adminHeaders,
                body: #"{"targets":[{"version":1,"weight":60},{"version":2,"weight":40}]}"#)
            #expect(staged.status == 200, "\(String(decoding: staged.body, as: UTF8.self))")
            // Clients are spread by their id, the same id always to the same version.
            var versions: [String: Int] = [:]
            for id in 0..<40 {
                let first = Self.json(try await Self.call(client, "/v1/models/m/resolve?ref=canary&client=c\(id)").body)
                let again = Self.json(try await Self.call(client, "/v1/models/m/resolve?ref=canary&client=c\(id)").body)
                #expect(first["version"] as? Int == again["version"] as? Int)
                versions["c\(id)"] = first["version"] as? Int
            }
            #expect(Set(versions.values) == [1, 2], "\(versions)")
            for weights in [
                "9223372036854775807, 1", "0, 100", "-1, 101", "50, 49", "1e30, 1",
            ] {
                let parts = weights.split(separator: ", ")
                let refused = try await Self.call(
                    client, "/v1/models/m/aliases/canary", method: .put, headers: Self.adminHeaders,
                    body: #"{"targets":[{"version":1,"weight":\#(parts[0])},{"version":2,"weight":\#(parts[1])}]}"#)
                #expect(refused.status == 400, "\(weights): \(String(decoding: refused.body, as: UTF8.self))")
            }
            // The refusal says what the weights add up to.
            let over = try await Self.call(
                client, "/v1/models/m/aliases/canary", method: .put, headers: Self.adminHeaders,
                body: #"{"targets":[{"version":1,"weight":90},{"version":2,"weight":20}]}"#)
            let message = Self.json(over.body)["error_description"] as? String ?? ""
            #expect(
                over.status == 400 && message.hasPrefix("The weights add up to 110 (90 + 20), not 100."), "\(message)")
            #expect(try await Self.call(client, "/v1/health").status == 200)
        }
    }

    @Test("Keys: writes need a key of the scope; adoption counts only clients with a key")
    func keysAndAdoption() async throws {
        try await Self.withHub { client, _ in
            let body = #"{"version":1}"#
            #expect(
                try await Self.call(client, "/v1/models/m/aliases/prod", method: .put, body: body).status == 401)
            let made = try await Self.call(
                client, "/v1/keys", method: .post, headers: Self.adminHeaders, body: #"{"name":"ci","scope":"read"}"#)
            let key = try #require(Self.json(made.body)["key"] as? String)
            let reader: HTTPFields = [.authorization: "Bearer \(key)"]
            #expect(
                try await Self.call(client, "/v1/models/m/aliases/prod", method: .put, headers: reader, body: body)
                    .status == 403)
            for id in ["a", "b", "c"] {
                _ = try await Self.call(client, "/v1/models/m/resolve?client=anonymous-\(id)")
                _ = try await Self.call(client, "/v1/models/m/resolve?client=keyed-\(id)", headers: reader)
            }
            let adoption = Self.json(try await Self.call(client, "/v1/models/m/adoption").body)
            let counts = adoption["versions"] as? [[String: Any]] ?? []
            #expect(counts.count == 1 && counts.first?["version"] as? Int == 2 && counts.first?["clients"] as? Int == 3)
        }
    }
}

/// The hub's routes, each declared once (issue 34): the OpenAPI document, the 405 table and
/// the access each route declares, checked against the routes themselves.
@Suite("Hub route list")
struct HubRouteListTests {
    /// The routes of a hub on a fresh data folder, and its router.
    static func withRoutes(
        _ body: @Sendable (RouteList<BasicRequestContext>, any TestClientProtocol) async throws -> Void
    ) async throws {
        let folder = try TemporaryFolder(prefix: "netrunner-hub-route-list")
        defer { folder.remove() }
        let logger = Logger(label: "test")
        // Reading needs a key too (no --anonymous-read), so that every keyed route asks for one.
        let hub = HubServer(
            configuration: .init(dataFolder: folder.url.path, adminKey: HubRoutesTests.admin, anonymousRead: false),
            logger: logger)
        // The list as the application declares it, on a link of its own (its handlers are never
        // called here); the client is `hub serve`'s application's.
        let listing = try await HubDatabase.openSQLite(folder: folder.url.path, logger: logger)
        do {
            let store = HubStore(database: listing.database, logger: logger)
            let blobs = try FileBlobStore(dataFolder: folder.url.path)
            let gates = GateRunner(
                store: store, blobs: blobs, settings: .init(dataFolder: folder.url.path), logger: logger)
            let routes = try hub.routes(store: store, blobs: blobs, gates: gates)
            try await hub.buildApplication().test(.router) { client in try await body(routes, client) }
        } catch {
            try? await listing.close()
            throw error
        }
        try await listing.close()
    }

    @Test("The OpenAPI document's paths are exactly the routes that name an operation")
    func document() async throws {
        try await Self.withRoutes { routes, client in
            let served = try await client.execute(uri: "/openapi.json", method: .get) { response in
                try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))
            }
            let paths = try #require((served as? [String: Any])?["paths"] as? [String: [String: Any]])
            let documented = Set(paths.flatMap { path, item in item.keys.map { "\($0.uppercased()) \(path)" } })
            var named = Set<String>()
            var elsewhere = Set<String>()
            for route in routes.routes {
                switch route.documentation {
                case .operation: named.insert("\(route.method) \(route.template)")
                case .elsewhere: elsewhere.insert("\(route.method) \(route.template)")
                }
            }
            #expect(documented == named)
            // The routes described elsewhere, on purpose: a new one must be added here, or documented.
            #expect(elsewhere == ["GET /", "HEAD /", "HEAD /v1/blobs/{digest}", "GET /openapi.json"])
        }
    }

    @Test("Every other method of every route is 405 with the route's Allow; each declared access holds")
    func methodsAndAccess() async throws {
        try await Self.withRoutes { routes, client in
            let table = routes.table
            for (template, allow) in table.allowed {
                let path = template.replacing(/\{[a-z]+\}/, with: "x1")
                for method in [HTTPRequest.Method.get, .post, .put, .delete] where !allow.contains(method.rawValue) {
                    let status = try await client.execute(uri: path, method: method) { $0.status }
                    #expect(status == .methodNotAllowed, "\(method) \(template)")
                }
            }
            // Without a key: the open routes answer, the keyed ones are 401.
            for route in routes.routes where route.method != .head {
                let path = route.template.replacing(/\{[a-z]+\}/, with: "x1")
                let status = try await client.execute(uri: path, method: route.method) { $0.status }
                if route.access == .open {
                    #expect(status == .ok, "\(route.method) \(route.template)")
                } else {
                    #expect(status == .unauthorized, "\(route.method) \(route.template)")
                }
            }
        }
    }
}
