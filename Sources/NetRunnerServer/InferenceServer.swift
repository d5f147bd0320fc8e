package import Logging
import NetRunner
package import NetRunnerEngine
import NetRunnerHTTP
import NetRunnerSupport

/// `netrunner serve`: the engine behind an HTTP server, the native API at `/v1`, KServe v2 at
/// `/v2`.
///
///     let engine = InferenceEngine(models: models, configuration: .init(threads: 2))
///     try await InferenceServer(engine: engine, configuration: .init()).run()
///
/// It is a Hummingbird application (``buildApplication(onListening:)``, built from
/// ``buildRouter(streams:)``), with the engine and the `--stream` readers as its services. It
/// binds to loopback unless told otherwise, and stops on SIGTERM or SIGINT after the requests
/// in flight finish (Hummingbird's graceful shutdown), then stops the engine.
package struct InferenceServer: Sendable {
    /// Where and how the server listens.
    package struct Configuration: Sendable {
        /// The address to bind (`127.0.0.1`: this machine only).
        package var host: String
        /// The port (0: any free port; ``run(onListening:)`` tells which).
        package var port: Int
        /// The largest request body, in bytes.
        package var maximumUploadBytes: Int
        /// The version reported at `/v2`.
        package var version: String
        /// API keys that may run models (`Authorization: Bearer KEY`); empty: no key needed.
        package var apiKeys: Set<String> = []
        /// Origins whose pages may call the server (CORS); `*` for any; empty: none.
        ///
        /// A request from a page of another origin (not the server's own) is refused with 403.
        package var allowedOrigins: Set<String> = []
        /// Host names answered besides `localhost`, `127.0.0.1` and `[::1]` when bound to
        /// loopback (a proxy's public name).
        ///
        /// A request addressed at another name gets 421 (against DNS rebinding). Given on
        /// another address, they restrict it the same way.
        package var allowedHosts: Set<String> = []
        /// How long a connection may stay idle, or take to send a request head, before it is
        /// closed; a request may take as long plus a second per 500 bytes it sends, before it
        /// is answered 408 and its connection closed (`RequestRateFloor`).
        package var idleTimeout: Duration = .seconds(60)
        /// The most a request may take, from its first byte until its body has been read whole,
        /// whatever its rate (408 past it); `nil`: no bound but the rate floor's.
        ///
        /// 300 s: the largest upload by default (32 MiB) needs 112 kB/s to get through.
        package var requestTimeout: Duration? = .seconds(300)
        /// The most connections open at once; more wait in the kernel's accept queue until one
        /// closes.
        package var maximumConnections = 512
        /// The most connections open at once from one client address (an IPv6 /64); one more is
        /// closed at accept; 0: no cap (behind a proxy, whose address every connection has).
        package var maximumConnectionsPerAddress = 64
        /// After SIGTERM or SIGINT, how long the requests in flight may take before their
        /// connections are cut and the server stops.
        package var drainTimeout: Duration = .seconds(20)
        /// The models folder imports are installed into (`POST /v1/imports`); `nil`: no imports.
        package var modelsFolder: String?
        /// Whether imports may download from loopback, private and link-local addresses
        /// (`--allow-private-imports`; default: no, against server-side request forgery).
        package var allowsPrivateImports = false
        /// Folders of photos offered as albums (`/v1/albums`).
        package var albums: [String] = []
        /// Similarity indexes searched at `/v1/indexes/{name}/search`, by name; each one's model
        /// must be served.
        package var indexes: [String: ServedIndex] = [:]
        /// How often the indexes' files are looked at for a new version to serve
        /// (`--index-poll`); `nil`: never.
        package var indexPoll: Duration? = .seconds(2)
        /// Video sources the server reads itself (`/v1/streams`), by name.
        package var streams: [(name: String, source: String)] = []
        /// The model the streams run (an id of the engine's); `nil`: the first detector served,
        /// else the first model.
        package var streamModel: String? = nil
        /// The minimum interval between two inferences of one stream (live mode).
        package var streamInterval: Duration = .milliseconds(200)

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - host: The address to bind.
        ///   - port: The port.
        ///   - maximumUploadBytes: The largest request body (default 32 MiB).
        ///   - version: The version reported at `/v2`.
        ///   - apiKeys: Keys that may run models; empty: no key needed.
        ///   - allowedOrigins: Origins whose pages may call (CORS).
        ///   - modelsFolder: Where imports are installed; `nil`: no imports.
        ///   - albums: Folders of photos offered as albums.
        ///   - streams: Video sources the server reads, by name.
        ///   - streamModel: The model the streams run; `nil`: the first detector, else the first model.
        ///   - streamInterval: The minimum interval between two inferences of one stream.
        package init(
            host: String = "127.0.0.1", port: Int = 8080, maximumUploadBytes: Int = 32 << 20,
            version: String = BuildVersion.description,
            apiKeys: Set<String> = [], allowedOrigins: Set<String> = [], modelsFolder: String? = nil,
            albums: [String] = [], streams: [(name: String, source: String)] = [], streamModel: String? = nil,
            streamInterval: Duration = .milliseconds(200)
        ) {
            self.modelsFolder = modelsFolder
            self.albums = albums
            self.streams = streams
            self.streamModel = streamModel
            self.streamInterval = streamInterval
            self.host = host
            self.port = port
            self.maximumUploadBytes = maximumUploadBytes
            self.version = version
            self.apiKeys = apiKeys
            self.allowedOrigins = allowedOrigins
        }
    }

    /// The engine.
    package let engine: InferenceEngine
    /// The configuration.
    package let configuration: Configuration
    /// The logger.
    package let logger: Logger
    /// The similarity indexes, as they are now (``Configuration/indexes`` as first read).
    package let indexes: ServedIndexes

    /// Creates a server.
    ///
    /// - Parameters:
    ///   - engine: The engine (started or not: ``run(onListening:)`` starts it).
    ///   - configuration: Where and how to listen.
    ///   - logger: The server's logger.
    package init(
        engine: InferenceEngine, configuration: Configuration, logger: Logger = Logger(label: "netrunner.serve")
    ) {
        self.engine = engine
        self.configuration = configuration
        self.logger = logger
        self.indexes = ServedIndexes(configuration.indexes, logger: logger)
    }

    /// Serves until SIGTERM or SIGINT, then lets the requests in flight finish and stops the
    /// engine.
    ///
    /// - Parameter onListening: Called once with the address and port bound.
    /// - Throws: The server's errors (the port taken, say).
    package func run(onListening: @escaping @Sendable (_ host: String, _ port: Int) -> Void = { _, _ in }) async throws
    {
        let app = try buildApplication(onListening: onListening)
        try await ServerLifecycle.runDraining(app, drainTimeout: configuration.drainTimeout, logger: logger)
    }

    /// Whether a key can be sent in `Authorization: Bearer KEY`: not empty, no spaces or control
    /// characters.
    package static func isUsableKey(_ key: String) -> Bool {
        !key.isEmpty && key.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value != 0x7F }
    }
}

/// Why ``InferenceServer/run(onListening:)`` cannot start.
struct InferenceServerError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
