import ArgumentParser
import Foundation
import Logging
import NetRunner
import NetRunnerHTTP
import NetRunnerHubServer
import NetRunnerServer
import NetRunnerTestSupport
import ServiceLifecycle
import Synchronization
import Testing

@testable import NetRunnerNet

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `netrunner serve ARGS` or `netrunner hub serve ARGS` in the test process (issue 34): the
/// arguments parsed by the commands themselves and the server each builds
/// (`Serve.makeServer`, `Hub.Serve.makeHub`), its whole Hummingbird application (channel
/// set-up included: the request rate floor, the first-request guard, the connection limit, the
/// idle timeout) on a real socket, 127.0.0.1 port 0. What differs from the child process: no
/// signal stops it, ``stop()`` does (the same graceful shutdown, within `--drain-timeout`), and
/// its log is the server's logger, captured (``log``).
final class LiveServer: Sendable {
    enum Kind: String, Sendable {
        case serve, hub
    }

    let kind: Kind
    /// The port it listens on.
    let port: Int
    /// `http://127.0.0.1:PORT`.
    var base: URL {
        var parts = URLComponents()
        (parts.scheme, parts.host, parts.port) = ("http", "127.0.0.1", port)
        return parts.url ?? URL(fileURLWithPath: "/")
    }
    /// `http://127.0.0.1:PORT`.
    var address: String { "http://127.0.0.1:\(port)" }
    private let group: ServiceGroup
    private let running: Task<(any Error)?, Never>
    private let stopped = Mutex<(clean: Bool, seconds: Double)?>(nil)
    private let captured: CapturedLog

    /// What the server logged so far (the last 64 kB).
    var log: String { captured.text }
    /// Whether ``log`` is all the server logged (nothing dropped off its start).
    var logIsWhole: Bool { captured.isWhole }

    private init(
        kind: Kind, service: any Service, drain: Duration, logger: Logger, captured: CapturedLog,
        listening: BoundPort
    ) async throws {
        self.kind = kind
        self.captured = captured
        var configuration = ServiceGroupConfiguration(services: [service], logger: logger)
        configuration.maximumGracefulShutdownDuration = drain
        let group = ServiceGroup(configuration: configuration)
        self.group = group
        let ended = Mutex<String?>(nil)
        // On threads of its own, not the cooperative pool that blocking tests can fill.
        running = Task(executorPreference: ServerThreads.shared) {
            do {
                try await group.run()
                ended.withLock { $0 = "stopped" }
                return nil
            } catch is CancellationError {
                // The drain timeout passed: what was in flight was cut (runDraining's exit 0).
                ended.withLock { $0 = "cancelled" }
                return nil
            } catch {
                ended.withLock { $0 = "\(error)" }
                return error
            }
        }
        let task = running
        do {
            var bound: Int?
            try await Eventually.wait(for: "the \(kind) server listening") {
                bound = listening.port.withLock { $0 }
                // A server that failed to start says why at once.
                if bound == nil, let why = ended.withLock({ $0 }) {
                    throw ServerProcess.ServerFailure(message: "the \(kind) server ended at start: \(why)")
                }
                return bound != nil
            }
            port = bound ?? 0
        } catch {
            await group.triggerGracefulShutdown()
            _ = await task.value
            throw error
        }
    }

    /// Runs `body` with `netrunner serve ARGUMENTS` in process, ready (`/v2/health/ready` 200),
    /// then stops it and expects a clean stop.
    ///
    /// - Parameters:
    ///   - arguments: More arguments of `serve` (`--port 0` and, unless given, `--idle-timeout 900`).
    ///   - models: A models folder imports may write to (made if missing); `nil`: the
    ///     repository's bundles, imports off.
    ///   - body: The test.
    static func serve<Value>(
        _ arguments: [String] = [], models: String? = nil, sourceLocation: SourceLocation = #_sourceLocation,
        _ body: (LiveServer) async throws -> Value
    ) async throws -> Value {
        let server = try await startServe(arguments, models: models)
        return try await server.running(sourceLocation: sourceLocation, body)
    }

    /// Runs `body` with `netrunner hub serve --data DATA --admin-key KEY ARGUMENTS` in process
    /// (as ``HubProcess`` starts it), then stops it and expects a clean stop.
    static func hub<Value>(
        data: String, arguments: [String] = [], sourceLocation: SourceLocation = #_sourceLocation,
        _ body: (LiveServer) async throws -> Value
    ) async throws -> Value {
        let server = try await startHub(data: data, arguments: arguments)
        return try await server.running(sourceLocation: sourceLocation, body)
    }

    private func running<Value>(
        sourceLocation: SourceLocation, _ body: (LiveServer) async throws -> Value
    ) async throws -> Value {
        let value: Value
        do {
            value = try await body(self)
        } catch {
            await stop()
            throw error
        }
        let (clean, _) = await stop()
        #expect(clean, "the \(kind) server did not stop cleanly; its log: \(log)", sourceLocation: sourceLocation)
        return value
    }

    static func startServe(_ arguments: [String], models: String?) async throws -> LiveServer {
        if let models { try FileManager.default.createDirectory(atPath: models, withIntermediateDirectories: true) }
        let argv =
            ["--port", "0"]
            + (models.map { ["--models", $0] } ?? ["--models", Fixtures.path("Models/bundles"), "--no-import"])
            // A long idle timeout unless a test sets its own (a starved test process is not a slow client).
            + (arguments.contains("--idle-timeout") ? [] : ["--idle-timeout", "900"])
            + arguments
        let command = try NetRunnerNetCommand.Serve.parse(argv)
        let captured = CapturedLog()
        let (server, _) = try command.makeServer(logger: captured.logger(label: "netrunner.serve"))
        let listening = BoundPort()
        let app = try server.buildApplication { _, port in listening.port.withLock { $0 = port } }
        let live = try await LiveServer(
            kind: Kind.serve, service: app, drain: server.configuration.drainTimeout, logger: server.logger,
            captured: captured, listening: listening)
        do {
            // On a fresh clone every model is first checked in a child process, two at a time for
            // the whole test process, while the rest of the suite runs: 120 s was once too short.
            try await Eventually.wait(for: "the server ready", upTo: .seconds(300), every: .milliseconds(50)) {
                let ready = try? await live.request("/v2/health/ready")
                return ready?.status == 200
            }
        } catch {
            await live.stop()
            throw error
        }
        return live
    }

    static func startHub(data: String, arguments: [String]) async throws -> LiveServer {
        let idle = arguments.contains("--idle-timeout") ? [] : ["--idle-timeout", "900"]
        let argv = ["--data", data, "--port", "0", "--admin-key", HubProcess.adminKey] + idle + arguments
        let command = try NetRunnerNetCommand.Hub.Serve.parse(argv)
        let captured = CapturedLog()
        let hub = try command.makeHub(logger: captured.logger(label: "netrunner.hub"))
        let listening = BoundPort()
        let service = HubService(hub: hub) { _, port in listening.port.withLock { $0 = port } }
        return try await LiveServer(
            kind: Kind.hub, service: service, drain: hub.configuration.drainTimeout, logger: hub.logger,
            captured: captured, listening: listening)
    }

    /// Stops the server as SIGTERM does (graceful shutdown, at most `--drain-timeout` for the
    /// requests in flight) and waits for it: whether it stopped cleanly, and how long it took.
    /// Once stopped, the same answer again.
    @discardableResult
    func stop() async -> (clean: Bool, seconds: Double) {
        if let done = stopped.withLock({ $0 }) { return done }
        let started = ContinuousClock.now
        await group.triggerGracefulShutdown()
        let error = await running.value
        let (seconds, attoseconds) = (ContinuousClock.now - started).components
        let result = (clean: error == nil, seconds: Double(seconds) + Double(attoseconds) * 1e-18)
        if let error { captured.append("stopped with \(error)") }
        stopped.withLock { $0 = result }
        return result
    }

    /// A request's status, headers (lower-cased names) and body, over the socket.
    func request(
        _ path: String, method: String = "GET", body: Data? = nil, contentType: String? = nil,
        headers: [String: String] = [:], key: String? = nil, timeout: TimeInterval = 60
    ) async throws -> ServerProcess.Reply {
        guard let url = URL(string: address + path) else { throw ServerProcess.ServerFailure(message: path) }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = method
        request.httpBody = body
        if let contentType { request.setValue(contentType, forHTTPHeaderField: "Content-Type") }
        if let key { request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        guard let http = response as? HTTPURLResponse else {
            throw ServerProcess.ServerFailure(message: "\(response)")
        }
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields { fields[String(describing: name).lowercased()] = "\(value)" }
        return ServerProcess.Reply(status: http.statusCode, headers: fields, body: data)
    }

    /// The server's accepted connections still open (its sockets on its port, not listening;
    /// a connection waiting in the kernel's accept queue has no socket of the server's yet).
    func connections() -> Int {
        Loopback.sockets().count { $0.port == port && !$0.isListening && $0.inode != 0 }
    }
}

/// The port a server said it bound, once it has.
final class BoundPort: Sendable {
    let port = Mutex<Int?>(nil)
}

/// The hub as a service: `hub serve`'s application (its store opened when built, closed when it
/// stops).
private struct HubService: Service {
    let hub: HubServer
    let onListening: @Sendable (String, Int) -> Void

    func run() async throws {
        // As the hub's own run binds it: the upload checks' memory limit and nice value.
        try await ModelGate.$policy.withValue(hub.configuration.modelGate) {
            try await hub.buildApplication(onListening: onListening).run()
        }
    }
}

/// A server's log lines, kept as they come (the last 64 kB).
final class CapturedLog: Sendable {
    private let lines = Mutex((text: "", dropped: false))

    var text: String { lines.withLock { $0.text } }
    /// Whether ``text`` is every line appended (none dropped to keep it under 64 kB).
    var isWhole: Bool { lines.withLock { !$0.dropped } }

    func append(_ line: String) {
        lines.withLock {
            $0.text += line + "\n"
            if $0.text.utf8.count > 65536 { ($0.text, $0.dropped) = (String($0.text.suffix(60000)), true) }
        }
    }

    /// A logger whose lines come here (and not to the test's standard error).
    func logger(label: String) -> Logger {
        Logger(label: label) { label in Handler(log: self, label: label) }
    }

    private struct Handler: LogHandler {
        let log: CapturedLog
        let label: String
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let fields = metadata.merging(event.metadata ?? [:]) { $1 }
            let shown =
                fields.isEmpty
                ? "" : " " + fields.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: " ")
            log.append("\(event.level) \(label): \(event.message)\(shown)")
        }
    }
}

extension LiveServer {
    /// A request to the hub as ``HubProcess`` makes it: with the admin key unless told otherwise.
    func hubRequest(
        _ path: String, method: String = "GET", body: Data? = nil, headers: [String: String] = [:],
        key: String? = HubProcess.adminKey, timeout: TimeInterval = 60
    ) async throws -> ServerProcess.Reply {
        try await request(path, method: method, body: body, headers: headers, key: key, timeout: timeout)
    }
}
