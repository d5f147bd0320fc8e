import FoundationEssentials
package import Hummingbird
import HummingbirdCore
import NetRunnerHTTP
import NetRunnerHub
import NetRunnerSupport
import ServiceLifecycle

extension HubServer {
    /// The hub as a Hummingbird application: HTTP/1.1 behind the request rate floor and the
    /// connection limits, the routes of ``routes(store:blobs:gates:)``, and two services, the
    /// database link (``HubDatabase``) and the gates' evaluations (``GateService``).
    ///
    /// The database is connected here; before the server accepts a connection its tables are
    /// made, the configuration's admin key recorded, abandoned uploads removed and the
    /// evaluations left pending queued. At the graceful shutdown (SIGTERM or SIGINT under
    /// ``run(onListening:)``) the server drains first, then the evaluations stop, then the
    /// database closes.
    ///
    /// - Parameter onListening: Called once with the address and port bound.
    /// - Returns: The application; run it (`runService()`, or in a `ServiceGroup`): the database
    ///   closes when it stops.
    /// - Throws: ``HubStartError`` when PostgreSQL cannot be reached; SQLite's errors; the data
    ///   folder's when it cannot be made or hold blobs.
    package func buildApplication(
        onListening: @escaping @Sendable (_ host: String, _ port: Int) -> Void = { _, _ in }
    ) async throws -> some ApplicationProtocol {
        try FileManager.default.createDirectory(atPath: configuration.dataFolder, withIntermediateDirectories: true)
        let database = try await HubDatabase.open(configuration, logger: logger)
        do {
            let store = HubStore(database: database.database, reconnect: database.reconnect, logger: logger)
            return try buildApplication(store: store, database: database, onListening: onListening)
        } catch {
            try? await database.close()
            throw error
        }
    }

    /// ``buildApplication(onListening:)`` on a store already open.
    ///
    /// - Parameters:
    ///   - store: The metadata store.
    ///   - database: The store's link, a service of the application (closed when it stops);
    ///     `nil` when the caller closes it (the tests' second node on one store).
    ///   - onListening: Called once with the address and port bound.
    /// - Returns: The application.
    /// - Throws: The data folder's errors when it cannot hold blobs.
    func buildApplication(
        store: HubStore, database: HubDatabase?,
        onListening: @escaping @Sendable (_ host: String, _ port: Int) -> Void = { _, _ in }
    ) throws -> some ApplicationProtocol {
        let folder = configuration.dataFolder
        let blobs = try FileBlobStore(dataFolder: folder)
        let gates = GateRunner(
            store: store, blobs: blobs,
            settings: .init(
                evaluator: Self.evaluator(configuration.evaluator), testBundles: configuration.testBundles,
                dataFolder: folder, concurrency: max(1, configuration.gateConcurrency),
                modelQueueLimit: configuration.gateQueueLimit, timeout: configuration.gateTimeout),
            logger: logger)
        let router = try buildRouter(routes: routes(store: store, blobs: blobs, gates: gates))
        let host = configuration.host
        // Hummingbird's HTTP/1.1 with the request rate floor (a request must keep coming at
        // 500 bytes/s once --idle-timeout is spent, and end within --request-timeout) and the
        // cap on one address's connections.
        let floor = RequestRateFloor(allowance: configuration.idleTimeout, limit: configuration.requestTimeout)
        let perAddress = AddressConnectionCap(configuration.maximumConnectionsPerAddress)
        // Near --max-connections, idle connections and the slowest bodies make room (any address).
        let budget = ConnectionBudget(configuration.maximumConnections)
        // Started in this order, stopped in the reverse one, after the server: the evaluations
        // (they record their results) before the database.
        let services: [any Service] = (database.map { [$0] } ?? []) + [GateService(gates: gates)]
        var app = Application(
            router: router, server: RequestRateFloor.http1(floor: floor, perAddress: perAddress, budget: budget),
            configuration: .init(
                address: .hostname(host, port: configuration.port), serverName: "netrunner-hub",
                availableConnectionsDelegate: MaximumAvailableConnections(
                    configuration.maximumConnections, logger: logger)
            ),
            services: services,
            onServerRunning: { channel in onListening(host, channel.localAddress?.port ?? 0) },
            logger: logger)
        let adminKey = configuration.adminKey
        app.beforeServerStarts {
            try await store.migrate()
            if let key = adminKey, !key.isEmpty {
                try await store.addKey(digest: HubKeys.digest(of: key), name: "admin", scope: .admin)
            }
            // Uploads cut off by a crash are never recorded: their files go at the next start
            // (only this machine's, of processes that are gone: other nodes may share the folder).
            Uploads.removeAbandoned(in: folder + "/uploads")
            // Evaluations a stop cut short (or another node left) run again, and versions no
            // gate has evaluated (published by a node of an older release) are queued; then
            // looked for again after each pass and every minute.
            await gates.submit(try await store.pendingEvaluations())
            await gates.sweep()
            await gates.startSweeping()
        }
        return app
    }

    /// The hub's router: its middleware (browsers' origins and hosts, 405, failures) and
    /// `routes`.
    func buildRouter(routes: RouteList<BasicRequestContext>) throws -> Router<BasicRequestContext> {
        let router = Router()
        router.add(
            middleware: HubBrowserMiddleware<BasicRequestContext>(
                browsers: BrowserGuard(
                    origins: [], allowedHosts: configuration.allowedHosts, bindHost: configuration.host)))
        router.add(middleware: MethodMiddleware<BasicRequestContext>(routes: routes.table))
        // What the handlers throw: a HubError as its status, anything else logged and 500.
        router.add(middleware: FailureMiddleware<BasicRequestContext>(logger: logger, unexpected: "The hub failed"))
        routes.register(on: router)
        return router
    }

    /// The hub's routes, each declared once, with the OpenAPI document's.
    ///
    /// - Parameters:
    ///   - store: The metadata store.
    ///   - blobs: The published files.
    ///   - gates: The gates' evaluations.
    /// - Returns: The routes.
    /// - Throws: When an operation is not described in the OpenAPI document (a programming error).
    func routes(store: HubStore, blobs: any BlobStore, gates: GateRunner) throws -> RouteList<BasicRequestContext> {
        var routes = HubRoutes(
            store: store, blobs: blobs, dataFolder: configuration.dataFolder,
            maximumUploadBytes: configuration.maximumUploadBytes, anonymousRead: configuration.anonymousRead,
            adoptionLimit: configuration.adoptionLimit, gates: gates, testBundles: configuration.testBundles,
            logger: logger
        ).routes
        try routes.addOpenAPIDocument(base: HubOpenAPI.base, operations: HubOpenAPI.allOperations)
        return routes
    }
}

/// The gates' evaluations as a service of the hub's application: stopped once the server has
/// drained, before the database closes (their process groups killed; they stay pending in the
/// store and run again at the next start).
///
/// They start before the server does (``HubServer/buildApplication(store:database:onListening:)``
/// queues them once the tables are made).
struct GateService: Service {
    let gates: GateRunner

    func run() async {
        // Until SIGTERM or SIGINT (or the group is cancelled: a failed bind, a drain past
        // --drain-timeout).
        try? await gracefulShutdown()
        await gates.stopRunning()
    }
}
