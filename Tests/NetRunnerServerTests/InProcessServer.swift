import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NetRunnerEngine
import NetRunnerHTTP
import NetRunnerTestSupport

@testable import NetRunnerServer

/// `serve` built in process as `netrunner serve` builds it (``InferenceServer/buildRouter(streams:)``),
/// for tests of the composed server without a child process.
enum InProcessServer {
    /// A server's route list on an engine (no model needed: the list does not depend on them).
    static func routes(
        engine: InferenceEngine = InferenceEngine(models: [], configuration: .init(threads: 1)),
        configuration: InferenceServer.Configuration = .init()
    ) throws -> RouteList<BasicRequestContext> {
        let server = InferenceServer(engine: engine, configuration: configuration)
        return try server.routes(
            streams: nil, metrics: ServerMetrics(engine: engine), access: server.makeAccess())
    }

    /// Runs `body` with a test client of the whole router (middleware included) of a server on
    /// `engine`, which the caller starts and stops.
    static func test(
        engine: InferenceEngine, configuration: InferenceServer.Configuration = .init(),
        _ body: @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        let router = try InferenceServer(engine: engine, configuration: configuration).buildRouter()
        try await Application(router: router).test(.router) { client in try await body(client) }
    }

    /// Starts an engine and waits, with a deadline, until none of its models is still loading
    /// (each loaded or failed) and, if asked, the engine is ready.
    ///
    /// - Parameters:
    ///   - engine: The engine.
    ///   - ready: Whether to wait for ``InferenceEngine/isReady`` too.
    ///   - limit: How long loading may take.
    /// - Returns: The engine.
    @discardableResult
    static func started(_ engine: InferenceEngine, ready: Bool = true, upTo limit: Duration = .seconds(60))
        async throws -> InferenceEngine
    {
        engine.start()
        try await Eventually.wait(for: "the engine's models loaded", upTo: limit) {
            (!ready || engine.isReady) && !engine.models.contains { engine.state(of: $0.id) == .loading }
        }
        return engine
    }

    /// A path of a template, each parameter `x1`.
    static func path(_ template: String) -> String {
        template.replacing(/\{[a-z]+\}/, with: "x1")
    }
}
