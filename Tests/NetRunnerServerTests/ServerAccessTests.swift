import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NetRunner
import NetRunnerEngine
import NetRunnerTestSupport
import Testing

@testable import NetRunnerServer

/// `serve`'s access rules, metrics labels and album-run limit on the composed server in process (they spawned a
/// server each before issue 34; the spellings a real HTTP parser sees stay in
/// `netrunnerTests`' `ServeAccessTests`).
@Suite("Server access in process")
struct ServerAccessTests {
    /// An engine serving the uint8 MobileNet from its file, not started (the routes below never
    /// run it).
    static func engine() throws -> InferenceEngine {
        let path = Fixtures.path(Fixtures.MobileNet.uint8)
        return InferenceEngine(
            models: [ServedModel(id: "mobilenet", model: try LoadedModel(.path(path)), origin: path)],
            configuration: .init(threads: 1))
    }

    @Test("/v1/models shows the models' paths only to a request with the key")
    func modelPaths() async throws {
        let engine = try Self.engine()
        let path = Fixtures.path(Fixtures.MobileNet.uint8)
        try await InProcessServer.test(engine: engine, configuration: .init(apiKeys: ["s3cret"])) { client in
            func origins(_ headers: HTTPFields) async throws -> [String] {
                try await client.execute(uri: "/v1/models", method: .get, headers: headers) { response in
                    let json = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))
                    let models = (json as? [String: Any])?["models"] as? [[String: Any]] ?? []
                    return models.compactMap { $0["origin"] as? String }
                }
            }
            #expect(try await origins([:]) == [(path as NSString).lastPathComponent])
            #expect(try await origins([.authorization: "Bearer s3cret"]) == [path])
            try await client.execute(uri: "/v1/models/mobilenet", method: .get) { response in
                let json = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))
                #expect((json as? [String: Any])?["origin"] as? String == (path as NSString).lastPathComponent)
            }
        }
    }

    @Test("Metrics label requests by route template: 200 random paths add at most one label")
    func boundedMetricLabels() async throws {
        let engine = try Self.engine()
        try await InProcessServer.test(engine: engine) { client in
            func labels() async throws -> Set<String> {
                let text = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
                return Set(
                    text.split(separator: "\n").filter { $0.hasPrefix("netrunner_http_requests_total{") }.compactMap {
                        $0.firstMatch(of: /route="([^"]*)"/).map { String($0.1) }
                    })
            }
            _ = try await labels()
            let before = try await labels()
            var random = SystemRandomNumberGenerator()
            for index in 0..<200 {
                let segment = String(
                    (0..<24).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789".randomElement(using: &random)! })
                let path = [
                    "/v1/models/x/\(segment)", "/v2/health/\(segment)", "/\(segment)", "/v1/\(segment)/models",
                    "/v2/models/\(segment)/infer/\(segment)", "//\(segment)//metrics",
                ][index % 6]
                _ = try await client.execute(uri: path, method: .get) { $0.status }
            }
            _ = try await client.execute(uri: "///metrics", method: .get) { $0.status }
            let after = try await labels()
            #expect(after.subtracting(before) == ["unmatched"], "new labels: \(after.subtracting(before).sorted())")
            #expect(after.count < 20, "\(after.count) labels: \(after.sorted().prefix(40))")
        }
    }

    @Test("At most two album runs go at once (429 with Retry-After); live requests keep their turn meanwhile")
    func albumRunLimit() async throws {
        let folder = try TemporaryFolder(prefix: "netrunner-album-limit")
        defer { folder.remove() }
        let album = folder.url.appendingPathComponent("many").path
        try FileManager.default.createDirectory(atPath: album, withIntermediateDirectories: true)
        let photo = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")))
        // Hard links: 600 photos for the price of one, so each run lasts a good while.
        try photo.write(to: URL(fileURLWithPath: album + "/photo0.jpg"))
        for index in 1..<600 {
            try FileManager.default.linkItem(atPath: album + "/photo0.jpg", toPath: album + "/photo\(index).jpg")
        }
        try await ServerSession.with(queue: 4, configuration: .init(albums: [album])) { server in
            var accepted = 0
            var refused: [String?] = []
            // All eight at once: the first two runs are still going when the others arrive, however
            // fast the machine decodes.
            let replies = try await withThrowingTaskGroup(of: (Int, String?, String).self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        let reply = try await server.request(
                            "/v1/albums/many/runs?model=\("mobilenet-v2-1.0-224-uint8")", method: "POST")
                        return (reply.status, reply.headers["retry-after"], String(decoding: reply.body, as: UTF8.self))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for (status, retryAfter, body) in replies {
                if status == 202 {
                    accepted += 1
                } else if status == 429 {
                    refused.append(retryAfter)
                } else {
                    Issue.record("run: \(status) \(body)")
                }
            }
            #expect(accepted == 2 && refused.count == 6, "\(accepted) accepted, \(refused.count) refused")
            #expect(refused.allSatisfy { $0 == "5" }, "\(refused)")
            var statuses: [Int] = []
            for _ in 0..<10 {
                let reply = try await server.request(
                    "/v1/models/\("mobilenet-v2-1.0-224-uint8")/classify", method: "POST", body: photo,
                    contentType: "image/jpeg")
                statuses.append(reply.status)
            }
            #expect(statuses.allSatisfy { $0 == 200 }, "live requests during the runs: \(statuses)")
        }
    }
}
