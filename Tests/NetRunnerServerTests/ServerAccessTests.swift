import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NetRunner
import NetRunnerEngine
import NetRunnerTestSupport
import Testing

@testable import NetRunnerServer

/// `serve`'s access rules and metrics labels on the composed server in process (they spawned a
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
}
