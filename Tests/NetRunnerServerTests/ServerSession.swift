import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import NetRunner
import NetRunnerEngine
import NetRunnerTestSupport
import Testing

@testable import NetRunnerServer

/// The composed server in process, serving the repository's bundles by their catalog ids as
/// `netrunner serve --models Models/bundles` does, with the request API of `netrunnerTests`'
/// spawned `ServerProcess` (issue 34: the tests that need no real socket run here).
struct ServerSession: Sendable {
    /// A reply: status, headers, body.
    struct Reply {
        var status: Int
        var headers: [String: String]
        var body: Data
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
    }

    let client: any TestClientProtocol

    /// Runs `body` against a server on the repository's bundles (or `models`), its engine
    /// started and every model ready (or failed), stopped afterwards.
    ///
    /// - Parameters:
    ///   - threads: The engine's workers (`--threads`).
    ///   - queue: The engine's queue (`--queue`); `nil`: its default.
    ///   - models: The models folder; `nil`: `Models/bundles`.
    ///   - configuration: The server's configuration (`modelsFolder` is set from `models` when
    ///     given).
    ///   - body: The test.
    static func with(
        threads: Int = 1, queue: Int? = nil, models: String? = nil,
        configuration: InferenceServer.Configuration = .init(),
        _ body: @Sendable (ServerSession) async throws -> Void
    ) async throws {
        let folder = models ?? Fixtures.path("Models/bundles")
        let served = try ModelCatalog(embedded: [], folder: folder).servedModels { _ in }
        let engine = InferenceEngine(models: served, configuration: .init(threads: threads, queueCapacity: queue))
        try await InProcessServer.started(engine, upTo: .seconds(300))
        var configuration = configuration
        if let models { configuration.modelsFolder = models }
        do {
            try await InProcessServer.test(engine: engine, configuration: configuration) { client in
                try await body(ServerSession(client: client))
            }
        } catch {
            await engine.shutdown()
            throw error
        }
        await engine.shutdown()
    }

    /// A request, as `ServerProcess.request` makes it.
    func request(
        _ path: String, method: String = "GET", body: Data? = nil, contentType: String? = nil,
        headers: [String: String] = [:]
    ) async throws -> Reply {
        var fields = HTTPFields()
        if let contentType { fields[.contentType] = contentType }
        for (name, value) in headers {
            if let field = HTTPField.Name(name) { fields[field] = value }
        }
        return try await client.execute(
            uri: path, method: HTTPRequest.Method(method) ?? .get, headers: fields,
            body: body.map { ByteBuffer(bytes: $0) }
        ) { response in
            var headers: [String: String] = [:]
            for field in response.headers { headers[field.name.canonicalName] = field.value }
            return Reply(
                status: Int(response.status.code), headers: headers, body: Data(response.body.readableBytesView))
        }
    }
}
