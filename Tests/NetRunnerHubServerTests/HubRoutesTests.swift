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
        let folder = try TemporaryFolder(prefix: "netrunner-hub-routes")
        defer { folder.remove() }
        let logger = Logger(label: "test")
        let hub = HubServer(configuration: .init(dataFolder: folder.url.path, adminKey: admin), logger: logger)
        let (database, close) = try await HubServer.openSQLite(folder: folder.url.path, logger: logger)
        let store = HubStore(database: database, logger: logger)
        let router = try await hub.makeRouter(store: store)
        let blobs = try BlobStore(dataFolder: folder.url.path)
        var digests: [String] = []
        for version in 1...2 {
            let bytes = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 * version) })
            let digest = SHA256.hexDigest(of: bytes)
            let file = try folder.write(bytes, named: "upload-\(version)")
            try blobs.adopt(file, sha256: digest)
            _ = try await store.publish(
                name: "m", sha256: digest, size: bytes.count, format: "tflite", task: "classification",
                modelID: "m", description: "test", by: "admin", alias: nil)
            digests.append(digest)
        }
        let published = digests
        do {
            try await Application(router: router).test(.router) { client in try await body(client, published) }
        } catch {
            try? await close()
            throw error
        }
        try await close()
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
            #expect(try await Self.call(client, "/v1/health").status == 200)
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

/// The hub's route table against its OpenAPI document (issue 24: one table, checked).
@Suite("Hub route table")
struct HubRouteTableTests {
    @Test("Every path and method of the hub's /openapi.json is in its table, with that method")
    func documentMatchesTable() throws {
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(HubOpenAPI.document.utf8)) as? [String: Any])
        let paths = try #require(json["paths"] as? [String: [String: Any]])
        for (path, operations) in paths {
            let methods = Set(operations.keys.map { $0.uppercased() }.filter { $0 != "PARAMETERS" })
            let allowed = Set((HubOpenAPI.routes.allowed[path] ?? "").split(separator: ", ").map(String.init))
            #expect(methods.isSubset(of: allowed), "\(path): documented \(methods), table \(allowed)")
        }
    }
}
