package import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import NetRunner
import NetRunnerEngine
import NetRunnerHTTP
import NetRunnerHub
import NetRunnerSupport
import NetRunnerVideo
import ServiceLifecycle

extension InferenceServer {
    /// The server as a Hummingbird application: the router of ``buildRouter(streams:)``, HTTP/1.1
    /// with the live route's WebSocket upgrade behind the request rate floor, and the engine and
    /// the `--stream` readers and the indexes' reloads as services (started with it; the engine
    /// stops after the requests in flight have drained).
    ///
    /// - Parameters:
    ///   - startsEngine: Whether the engine starts with the application (else the caller starts
    ///     it: a test that opens the page while every model is still loading).
    ///   - onListening: Called once with the address and port bound.
    /// - Returns: The application; `run()` it, or hand it to a `ServiceGroup`.
    /// - Throws: ``InferenceServerError`` for an unusable configuration; ``EngineError`` for a
    ///   stream model not served.
    package func buildApplication(
        startsEngine: Bool = true, onListening: @escaping @Sendable (_ host: String, _ port: Int) -> Void = { _, _ in }
    ) throws -> some ApplicationProtocol {
        let streams = try makeStreams()
        let router = try buildRouter(streams: streams)
        let access = makeAccess()
        let (host, engine) = (configuration.host, self.engine)
        let maximumFrameBytes = configuration.maximumUploadBytes
        let idleTimeout = configuration.idleTimeout
        // The request rate floor's watchers (RequestRateFloor) among the HTTP handlers: a
        // request must keep coming at 500 bytes/s once --idle-timeout is spent, and end within
        // --request-timeout.
        let channel = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(
                // The idle timeout is the floor's (RequestRateGuard), not Hummingbird's.
                additionalChannelHandlers: RequestRateFloor.httpHandlers(), idleTimeout: nil),
            ws: .init(maxFrameSize: maximumFrameBytes))
        let floor = RequestRateFloor(allowance: idleTimeout, limit: configuration.requestTimeout)
        // One client address may not take every connection (--max-connections-per-address).
        let perAddress = AddressConnectionCap(configuration.maximumConnectionsPerAddress)
        // Near --max-connections, idle connections and the slowest bodies make room (any address).
        let budget = ConnectionBudget(configuration.maximumConnections)
        let server = HTTPServerBuilder { responder in
            RequestRateFloor.guarded(
                GuardedUpgradeChannel(
                    // Expect: 100-continue answered once the handler reads the body.
                    inner: HTTP1WebSocketUpgradeChannel(
                        responder: ExpectContinue.responder(responder), configuration: channel
                    ) {
                        request, channel, _ in
                        guard
                            let live = LiveRoute.match(
                                request, engine: engine, maximumFrameBytes: maximumFrameBytes, access: access)
                        else {
                            return .dontUpgrade
                        }
                        // A WebSocket may stay quiet as long as it likes.
                        RequestRateFloor.stop(on: channel)
                        return .upgrade([:]) { inbound, outbound, _ in try await live.serve(inbound, outbound) }
                    },
                    firstRequestTimeout: idleTimeout),
                floor: floor, perAddress: perAddress, budget: budget)
        }
        var app = Application(
            router: router, server: server,
            configuration: .init(
                address: .hostname(host, port: configuration.port), serverName: "netrunner",
                availableConnectionsDelegate: MaximumAvailableConnections(
                    configuration.maximumConnections, logger: logger)
            ),
            onServerRunning: { channel in onListening(host, channel.localAddress?.port ?? 0) },
            logger: logger)
        app.addServices(EngineService(engine: engine, starts: startsEngine))
        if let streams { app.addServices(StreamsService(streams: streams)) }
        if !configuration.indexes.isEmpty, let interval = configuration.indexPoll, interval > .zero {
            app.addServices(IndexReloadService(indexes: indexes, interval: interval))
        }
        return app
    }

    /// The server's router: its middleware (metrics, access, 405) and every route.
    ///
    /// The routes are ``routes(streams:metrics:access:)``'s. The tests run it in process
    /// (`app.test(.router)`) with an engine they started.
    ///
    /// - Parameter streams: The `--stream` readers, or `nil`.
    /// - Returns: The router.
    /// - Throws: ``InferenceServerError`` for an unusable API key.
    func buildRouter(streams: ServerStreams? = nil) throws -> Router<BasicRequestContext> {
        if let blank = configuration.apiKeys.first(where: { !Self.isUsableKey($0) }) {
            throw InferenceServerError(
                message: "An API key cannot be empty or hold spaces or control characters: \"\(blank)\".")
        }
        let metrics = ServerMetrics(engine: engine, streams: streams)
        let access = makeAccess()
        let routes = try self.routes(streams: streams, metrics: metrics, access: access)
        // HEAD answers as GET does (open routes open, without a body).
        let router = Router(options: .autoGenerateHeadEndpoints)
        router.add(middleware: MetricsMiddleware<BasicRequestContext>(metrics: metrics))
        router.add(middleware: AccessMiddleware<BasicRequestContext>(access: access, open: routes.openTemplates))
        // After CORS, which answers the preflights (OPTIONS) itself.
        router.add(middleware: MethodMiddleware<BasicRequestContext>(routes: routes.table))
        // Innermost: what the handlers throw becomes its response before metrics count it.
        router.add(middleware: FailureMiddleware<BasicRequestContext>())
        router.add(middleware: UnloadedModelMiddleware<BasicRequestContext>())
        routes.register(on: router)
        return router
    }

    /// Every route of the server, each declared once: the native API, imports, albums,
    /// similarity indexes, metrics, KServe v2, streams, the live socket, the web page and the
    /// OpenAPI document.
    func routes(streams: ServerStreams?, metrics: ServerMetrics, access: ServerAccess) throws -> RouteList<
        BasicRequestContext
    > {
        var routes = RouteList<BasicRequestContext>()
        // The registry looked at once: each task's route and its OpenAPI operation agree.
        let tasks = VisionTaskRegistry.definitions
        routes.add(
            NativeRoutes(
                engine: engine, maximumUploadBytes: configuration.maximumUploadBytes, metrics: metrics, access: access,
                tasks: tasks
            ).routes)
        routes.add(LiveRoute.routes)
        routes.add(
            ImportRoutes(
                engine: engine,
                importer: configuration.modelsFolder.map {
                    ModelImporter(modelsFolder: $0, allowsPrivateAddresses: configuration.allowsPrivateImports)
                }
            ).routes)
        routes.add(
            AlbumRoutes(
                engine: engine, albums: AlbumRoutes.Album.load(configuration.albums, logger: logger),
                maximumImageBytes: max(configuration.maximumUploadBytes, 64 << 20)
            ).routes)
        routes.add(
            IndexRoutes(
                engine: engine, indexes: indexes, maximumUploadBytes: configuration.maximumUploadBytes
            ).routes)
        routes.add(metrics.routes)
        routes.add(
            KServeRoutes(
                engine: engine, maximumUploadBytes: configuration.maximumUploadBytes, version: configuration.version,
                access: access, modelsFolder: configuration.modelsFolder
            ).routes)
        routes.add(StreamRoutes(streams: streams).routes)
        routes.add(WebApp.routes)
        try routes.addOpenAPIDocument(
            base: OpenAPIDocument.base(tasks: tasks), operations: OpenAPIDocument.operations(tasks: tasks))
        return routes
    }

    /// Who may call: the configuration's keys, origins and host names.
    func makeAccess() -> ServerAccess {
        ServerAccess(
            keys: configuration.apiKeys,
            browsers: BrowserGuard(
                origins: configuration.allowedOrigins, allowedHosts: configuration.allowedHosts,
                bindHost: configuration.host))
    }

    /// The streams of the configuration, or `nil` when there are none.
    ///
    /// Their frames are answered by the engine.
    func makeStreams() throws -> ServerStreams? {
        guard !configuration.streams.isEmpty else { return nil }
        let models = engine.models
        let model: ServedModel
        if let id = configuration.streamModel {
            model = try engine.model(id)
        } else if let first = models.first(where: {
            VisionTaskRegistry.definition(for: $0.kind)?.locatesInImage == true
        })
            ?? models.first
        {
            model = first
        } else {
            throw EngineError.unknownModel(id: "(none)", known: [])
        }
        return ServerStreams(
            streams: configuration.streams.map { ServerStreams.Stream(name: $0.name, source: VideoSource($0.source)) },
            model: model, engine: engine, interval: configuration.streamInterval, logger: logger)
    }
}

/// The engine as a service of the server's application: started with it, shut down once the
/// server has drained (services stop in the reverse order of their start, the server first).
struct EngineService: Service {
    let engine: InferenceEngine
    /// Whether it starts the engine (else its owner does, when it likes).
    var starts = true

    func run() async throws {
        if starts { engine.start() }
        // Until SIGTERM or SIGINT (or the group is cancelled: a failed bind).
        try? await gracefulShutdown()
        await engine.shutdown()
    }
}

/// The `--stream` readers as a service: they read until the server stops.
struct StreamsService: Service {
    let streams: ServerStreams

    func run() async {
        await cancelWhenGracefulShutdown { await streams.run() }
    }
}
