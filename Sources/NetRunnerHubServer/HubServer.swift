import FoundationEssentials
import Hummingbird
import HummingbirdCore
package import Logging
import NIOCore
import NetRunnerHTTP
import NetRunnerHub
import NetRunnerSupport
import PostgresKit
import SQLKit
import SQLiteKit
package import ServiceLifecycle
import UnixSignals

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `netrunner hub serve`: the self-hosted model hub.
///
///     let hub = HubServer(configuration: .init(dataFolder: "/srv/models", adminKey: key))
///     try await hub.run()
///
/// Metadata in an embedded SQLite database (`hub.sqlite` in the data folder), files beside it,
/// content-addressed (`blobs/sha256/<hex>`). Every upload is untrusted: size-limited while it
/// streams in, unpacked and validated as `netrunner import` does (a child process runs the
/// model), and only then stored and recorded, in one transaction. Binds to loopback unless told
/// otherwise; stops on SIGTERM or SIGINT after the requests in flight.
package struct HubServer: Sendable {
    /// Where and how the hub runs.
    package struct Configuration: Sendable {
        /// The address to bind.
        package var host: String
        /// The port (0: any free port).
        package var port: Int
        /// The folder of the database and the files.
        package var dataFolder: String
        /// A key with the admin scope, stored (hashed) at start: the first key of a new hub.
        package var adminKey: String?
        /// Whether listing, resolving and downloading need no key.
        package var anonymousRead: Bool
        /// The largest upload, in bytes.
        package var maximumUploadBytes: Int
        /// A PostgreSQL database for the metadata (`postgres://user:password@host:port/db`), so
        /// several hub nodes sharing the data folder's files can share one store; `nil`: the
        /// embedded SQLite database in the data folder.
        package var databaseURL: String?
        /// PostgreSQL: the longest a statement may go unanswered before its request fails
        /// with 503 and the connection is opened again.
        package var databaseDeadline: Duration
        /// The most client ids whose adoption is kept per model (only clients with a key are
        /// counted): the adoption table's bound.
        package var adoptionLimit = 100_000
        /// Host names answered besides `localhost`, `127.0.0.1` and `[::1]` when bound to
        /// loopback (a proxy's public name); a request addressed at another name gets 421.
        package var allowedHosts: Set<String> = []
        /// How long a connection may stay idle, or take to send a request head, before it is
        /// closed; a request may take as long plus a second per 500 bytes it sends, before it
        /// is answered 408 and its connection closed (`RequestRateFloor`).
        package var idleTimeout: Duration = .seconds(60)
        /// The most a request may take, from its first byte until its body has been read whole,
        /// whatever its rate (408 past it); `nil`: no bound but the rate floor's.
        ///
        /// An hour: the largest upload by default (1 GiB) needs 300 kB/s to get through.
        package var requestTimeout: Duration? = .seconds(3600)
        /// The most connections open at once; more wait in the kernel's accept queue.
        package var maximumConnections = 512
        /// The most connections open at once from one client address (an IPv6 /64); one more is
        /// closed at accept; 0: no cap (behind a proxy, whose address every connection has).
        package var maximumConnectionsPerAddress = 64
        /// After SIGTERM or SIGINT, how long the requests in flight may take before their
        /// connections are cut and the hub stops.
        package var drainTimeout: Duration = .seconds(20)
        /// The folder of the `.testbundle` folders gates name (`--test-bundles`); `nil`: no
        /// gates can be set.
        package var testBundles: String?
        /// The `netrunner` that runs the gates' evaluations; `nil`: `NETRUNNER_EVALUATOR`, else
        /// `netrunner` beside the running executable, else on `PATH`.
        package var evaluator: String?
        /// The most gate evaluations at once (`--gate-concurrency`).
        package var gateConcurrency = 1
        /// The longest one gate evaluation may take (`--gate-timeout`).
        package var gateTimeout: Duration = .seconds(900)

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - host: The address to bind (default loopback).
        ///   - port: The port (default 8090).
        ///   - dataFolder: The folder of the database and the files (made if missing).
        ///   - adminKey: The first admin key, if any.
        ///   - anonymousRead: Whether reading needs no key (default yes).
        ///   - maximumUploadBytes: The largest upload (default 1 GiB).
        ///   - databaseURL: A PostgreSQL URL; `nil` for the embedded SQLite database.
        ///   - databaseDeadline: PostgreSQL: the longest a statement may go unanswered
        ///     (default 30 s).
        package init(
            host: String = "127.0.0.1", port: Int = 8090, dataFolder: String, adminKey: String? = nil,
            anonymousRead: Bool = true, maximumUploadBytes: Int = 1 << 30, databaseURL: String? = nil,
            databaseDeadline: Duration = .seconds(30)
        ) {
            self.databaseURL = databaseURL
            self.databaseDeadline = databaseDeadline
            self.host = host
            self.port = port
            self.dataFolder = dataFolder
            self.adminKey = adminKey
            self.anonymousRead = anonymousRead
            self.maximumUploadBytes = maximumUploadBytes
        }
    }

    /// The configuration.
    package let configuration: Configuration
    /// The logger.
    package let logger: Logger

    /// Creates a hub.
    package init(configuration: Configuration, logger: Logger = Logger(label: "netrunner.hub")) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Serves until SIGTERM or SIGINT.
    ///
    /// - Parameter onListening: Called once with the address and port bound.
    /// - Throws: The database's or the server's errors.
    package func run(onListening: @escaping @Sendable (_ host: String, _ port: Int) -> Void = { _, _ in }) async throws
    {
        try await withApplication(onListening: onListening) { app in
            try await ServerLifecycle.runDraining(app, drainTimeout: configuration.drainTimeout, logger: logger)
        }
    }

    /// Runs `body` with the hub's application, its store opened before and closed after.
    ///
    /// The application: Hummingbird's HTTP/1.1 with the request rate floor and the connection
    /// limit, the routes of ``makeRouter(store:)``. ``run(onListening:)`` runs it until a
    /// signal; the tests run it in process.
    ///
    /// - Parameters:
    ///   - onListening: Called once with the address and port bound.
    ///   - body: Runs the application.
    /// - Throws: The database's errors, or `body`'s.
    package func withApplication(
        onListening: @escaping @Sendable (_ host: String, _ port: Int) -> Void,
        _ body: (any Service) async throws -> Void
    ) async throws {
        let folder = configuration.dataFolder
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let database: any SQLDatabase
        let close: @Sendable () async throws -> Void
        var reconnect: (@Sendable () async throws -> (any SQLDatabase)?)? = nil
        if let url = configuration.databaseURL {
            let link: PostgresLink
            do {
                let settings = try SQLPostgresConfiguration(url: url)
                link = try await PostgresLink.connect(
                    configuration: settings.coreConfiguration, deadline: configuration.databaseDeadline, logger: logger)
            } catch {
                throw HubStartError(
                    message: "cannot open the PostgreSQL database \(Self.redacted(url)): \(String(reflecting: error))")
            }
            database = link.database
            reconnect = { try await link.reopenedIfClosed() }
            close = { try await link.close() }
        } else {
            (database, close) = try await Self.openSQLite(folder: folder, logger: logger)
        }
        let store = HubStore(database: database, reconnect: reconnect, logger: logger)
        let router: Router<BasicRequestContext>
        let gates: GateRunner
        do {
            (router, gates) = try await makeRouterAndGates(store: store)
        } catch {
            try? await close()
            throw error
        }
        let host = configuration.host
        // Hummingbird's HTTP/1.1 with the request rate floor (a request must keep coming at
        // 500 bytes/s once --idle-timeout is spent, and end within --request-timeout) and the
        // cap on one address's connections.
        let floor = RequestRateFloor(allowance: configuration.idleTimeout, limit: configuration.requestTimeout)
        let perAddress = AddressConnectionCap(configuration.maximumConnectionsPerAddress)
        let app = Application(
            router: router, server: RequestRateFloor.http1(floor: floor, perAddress: perAddress),
            configuration: .init(
                address: .hostname(host, port: configuration.port), serverName: "netrunner-hub",
                availableConnectionsDelegate: MaximumAvailableConnections(
                    configuration.maximumConnections, logger: logger)
            ),
            onServerRunning: { channel in onListening(host, channel.localAddress?.port ?? 0) },
            logger: logger)
        // The database is closed even when the run was cancelled (a drain past --drain-timeout
        // cancels the service's task): closing on a cancelled task could give up before the
        // connection was closed, and SQLiteNIO asserts in a connection's deinit that it was (a
        // debug-build test run died of it). An unstructured task is not cancelled with this one.
        let closing: @Sendable () async throws -> Void = {
            // Evaluations still running stop with the hub (they run again at its next start).
            await gates.stopRunning()
            try await Task { try await close() }.value
        }
        do {
            try await body(app)
        } catch {
            try? await closing()
            throw error
        }
        try await closing()
    }

    /// The embedded SQLite database of a data folder (`hub.sqlite`), in WAL mode with full
    /// synchronous writes: a crash leaves the last committed state; readers do not block the
    /// writer.
    ///
    /// - Parameters:
    ///   - folder: The data folder.
    ///   - logger: The logger.
    /// - Returns: The database, and how to close it.
    /// - Throws: SQLite's errors.
    static func openSQLite(folder: String, logger: Logger) async throws -> (
        database: any SQLDatabase, close: @Sendable () async throws -> Void
    ) {
        let sqlite = try await SQLiteConnection.open(storage: .file(path: folder + "/hub.sqlite"), logger: logger)
        let database = sqlite.sql()
        try await database.raw("PRAGMA journal_mode=WAL").run()
        try await database.raw("PRAGMA synchronous=FULL").run()
        return (database, { try await sqlite.close() })
    }

    /// The hub's routes and middleware over a store, as `run` serves them.
    ///
    /// The tests call it in process. Migrates the store, records the configuration's admin
    /// key, removes abandoned uploads.
    ///
    /// - Parameter store: The metadata store.
    /// - Returns: The router.
    /// - Throws: The store's errors; the data folder's when it cannot hold blobs.
    func makeRouter(store: HubStore) async throws -> Router<BasicRequestContext> {
        try await makeRouterAndGates(store: store).router
    }

    /// The router of ``makeRouter(store:)`` and the gates' runner behind it (stopped with the
    /// hub).
    func makeRouterAndGates(store: HubStore) async throws -> (router: Router<BasicRequestContext>, gates: GateRunner) {
        let (routes, gates) = try await makeRoutesAndGates(store: store)
        let router = Router()
        router.add(
            middleware: HubBrowserMiddleware<BasicRequestContext>(
                browsers: BrowserGuard(
                    origins: [], allowedHosts: configuration.allowedHosts, bindHost: configuration.host)))
        router.add(middleware: MethodMiddleware<BasicRequestContext>(routes: routes.table))
        // What the handlers throw: a HubError as its status, anything else logged and 500.
        router.add(middleware: FailureMiddleware<BasicRequestContext>(logger: logger, unexpected: "The hub failed"))
        routes.register(on: router)
        return (router, gates)
    }

    /// The hub's routes over a store, each declared once, with the OpenAPI document's.
    ///
    /// - Parameter store: The metadata store (migrated here).
    /// - Returns: The routes.
    /// - Throws: The store's errors; the data folder's when it cannot hold blobs.
    func makeRoutes(store: HubStore) async throws -> RouteList<BasicRequestContext> {
        try await makeRoutesAndGates(store: store).routes
    }

    /// The routes of ``makeRoutes(store:)`` and the gates' runner they queue evaluations on.
    func makeRoutesAndGates(store: HubStore) async throws -> (routes: RouteList<BasicRequestContext>, gates: GateRunner)
    {
        let folder = configuration.dataFolder
        try await store.migrate()
        if let key = configuration.adminKey, !key.isEmpty {
            try await store.addKey(digest: HubKeys.digest(of: key), name: "admin", scope: .admin)
        }
        // Uploads cut off by a crash are never recorded: their files go at the next start
        // (only this machine's, of processes that are gone: other nodes may share the folder).
        Uploads.removeAbandoned(in: folder + "/uploads")
        let blobs = try BlobStore(dataFolder: folder)
        let gates = GateRunner(
            store: store, blobs: blobs,
            settings: .init(
                evaluator: Self.evaluator(configuration.evaluator), testBundles: configuration.testBundles,
                dataFolder: folder, concurrency: max(1, configuration.gateConcurrency),
                timeout: configuration.gateTimeout),
            logger: logger)
        // Evaluations a stop cut short (or another node left) run again.
        await gates.submit(try await store.pendingEvaluations())
        var routes = HubRoutes(
            store: store, blobs: blobs, dataFolder: folder, maximumUploadBytes: configuration.maximumUploadBytes,
            anonymousRead: configuration.anonymousRead, adoptionLimit: configuration.adoptionLimit, gates: gates,
            testBundles: configuration.testBundles, logger: logger
        ).routes
        try routes.addOpenAPIDocument(base: HubOpenAPI.base, operations: HubOpenAPI.operations)
        return (routes, gates)
    }

    /// The evaluator: `explicit`, else `NETRUNNER_EVALUATOR`, else `netrunner` beside the running
    /// executable (`netrunner-net` is installed beside it; a test binary is built beside it),
    /// else on `PATH`; `nil` when none is executable.
    static func evaluator(_ explicit: String?) -> String? {
        let environment = getenv("NETRUNNER_EVALUATOR").map { String(cString: $0) }
        if let chosen = explicit ?? environment, !chosen.isEmpty { return access(chosen, X_OK) == 0 ? chosen : nil }
        var candidates: [String] = []
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if count > 0 {
            let path = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if let slash = path.lastIndex(of: "/") { candidates.append(String(path[..<slash]) + "/netrunner") }
        }
        for folder in (getenv("PATH").map { String(cString: $0) } ?? "").split(separator: ":") {
            candidates.append("\(folder)/netrunner")
        }
        return candidates.first { access($0, X_OK) == 0 }
    }

    /// A database URL without its password, for messages.
    static func redacted(_ url: String) -> String {
        guard let at = url.lastIndex(of: "@"), let scheme = url.range(of: "://"),
            let colon = url[scheme.upperBound..<at].firstIndex(of: ":")
        else { return url }
        return String(url[..<colon]) + ":***" + String(url[at...])
    }
}

/// Why the hub could not start.
struct HubStartError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
