import FoundationEssentials
package import Logging
package import NetRunner
import NetRunnerHTTP
import NetRunnerSupport

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
/// It is a Hummingbird application (``buildApplication(onListening:)``) whose services are the
/// database link (``HubDatabase``) and the gates' evaluations (``GateRunner``).
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
        /// What the model gate holds an upload to (its memory, its check's nice value), bound
        /// around the hub's work (``run(onListening:)``); `nil`: the process's default.
        package var modelGate: ModelGate.Policy?
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
        /// The most evaluations of one model waiting in memory; more wait in the store, pending
        /// (the hidden `--gate-queue-limit`, for the tests).
        package var gateQueueLimit = 16

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

    /// Serves until SIGTERM or SIGINT, then lets the requests in flight finish (at most
    /// `drainTimeout`), stops the gates' evaluations and closes the database; its
    /// ``Configuration/modelGate`` bound throughout.
    ///
    /// - Parameter onListening: Called once with the address and port bound.
    /// - Throws: The database's or the server's errors.
    package func run(onListening: @escaping @Sendable (_ host: String, _ port: Int) -> Void = { _, _ in }) async throws
    {
        try await ModelGate.$policy.withValue(configuration.modelGate ?? ModelGate.current) {
            let app = try await buildApplication(onListening: onListening)
            try await ServerLifecycle.runDraining(app, drainTimeout: configuration.drainTimeout, logger: logger)
        }
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
        guard let at = url.lastIndex(of: "@"), let scheme = url.firstRange(of: "://"),
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
