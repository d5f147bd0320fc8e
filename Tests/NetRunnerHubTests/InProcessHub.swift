import Foundation
import Logging
import NetRunnerHubServer
import NetRunnerTestSupport
import ServiceLifecycle
import Synchronization
import Testing

/// `netrunner hub serve --data DATA --port 0 --admin-key KEY --idle-timeout 900 [--private]`
/// (as ``HubProcess`` starts it) in the test process: the hub's whole application on a real
/// socket, 127.0.0.1 port 0, stopped by the graceful shutdown SIGTERM triggers (``stop()``).
/// Its log is kept (``log``), not printed.
final class InProcessHub: Sendable {
    /// `http://127.0.0.1:PORT`.
    let address: String
    private let group: ServiceGroup
    private let running: Task<(any Error)?, Never>
    private let stopped = Mutex<Bool?>(nil)
    private let lines: Lines

    /// What the hub logged so far.
    var log: String { lines.text }

    private init(group: ServiceGroup, running: Task<(any Error)?, Never>, address: String, lines: Lines) {
        (self.group, self.running, self.address, self.lines) = (group, running, address, lines)
    }

    /// Runs `body` with a hub on `data`, then stops it and expects a clean stop.
    ///
    /// - Parameters:
    ///   - data: Its data folder.
    ///   - anonymousRead: Whether reading needs no key (`false`: `--private`).
    ///   - testBundles: The folder of test bundles its gates name (`--test-bundles`), if any.
    ///   - body: The test.
    static func run<Value>(
        data: String, anonymousRead: Bool = true, testBundles: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation, _ body: (InProcessHub) async throws -> Value
    ) async throws -> Value {
        let hub = try await start(data: data, anonymousRead: anonymousRead, testBundles: testBundles)
        let value: Value
        do {
            value = try await body(hub)
        } catch {
            await hub.stop()
            throw error
        }
        let clean = await hub.stop()
        #expect(clean, "the hub did not stop cleanly; its log: \(hub.log)", sourceLocation: sourceLocation)
        return value
    }

    private static func start(data: String, anonymousRead: Bool, testBundles: String?) async throws
        -> InProcessHub
    {
        var configuration = HubServer.Configuration(
            port: 0, dataFolder: data, adminKey: HubProcess.adminKey, anonymousRead: anonymousRead)
        configuration.testBundles = testBundles
        configuration.idleTimeout = .seconds(900)
        let lines = Lines()
        var logger = Logger(label: "netrunner.hub") { _ in Lines.Handler(lines: lines) }
        // As `hub serve` sets it.
        logger.logLevel = .notice
        let server = HubServer(configuration: configuration, logger: logger)
        let bound = Mutex<Int?>(nil)
        var settings = ServiceGroupConfiguration(
            services: [Served(hub: server) { _, port in bound.withLock { $0 = port } }], logger: logger)
        settings.maximumGracefulShutdownDuration = configuration.drainTimeout
        let group = ServiceGroup(configuration: settings)
        let ended = Mutex<String?>(nil)
        // On threads of its own, not the cooperative pool that blocking tests can fill.
        let running = Task(executorPreference: ServerThreads.shared) { () -> (any Error)? in
            do {
                try await group.run()
                ended.withLock { $0 = "stopped" }
                return nil
            } catch {
                ended.withLock { $0 = "\(error)" }
                return error
            }
        }
        var port = 0
        do {
            try await Eventually.wait(for: "the hub listening") {
                if let listening = bound.withLock({ $0 }) {
                    port = listening
                    return true
                }
                // A hub that failed to start says why at once.
                if let why = ended.withLock({ $0 }) { throw StartFailure(description: "the hub ended: \(why)") }
                return false
            }
        } catch {
            await group.triggerGracefulShutdown()
            _ = await running.value
            throw error
        }
        return InProcessHub(group: group, running: running, address: "http://127.0.0.1:\(port)", lines: lines)
    }

    /// Stops the hub as SIGTERM does and waits for it: whether it stopped cleanly. Once
    /// stopped, the same answer again.
    @discardableResult
    func stop() async -> Bool {
        if let done = stopped.withLock({ $0 }) { return done }
        await group.triggerGracefulShutdown()
        let error = await running.value
        if let error { lines.append("stopped with \(error)") }
        stopped.withLock { $0 = error == nil }
        return error == nil
    }

    /// A hub that did not start.
    struct StartFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// The hub as a service: its application built (its store opened) and run (the store
    /// closed when it stops).
    private struct Served: Service {
        let hub: HubServer
        let onListening: @Sendable (String, Int) -> Void

        func run() async throws {
            try await hub.buildApplication(onListening: onListening).run()
        }
    }

    /// The hub's log lines (the last 64 kB).
    private final class Lines: Sendable {
        private let kept = Mutex("")

        var text: String { kept.withLock { $0 } }

        func append(_ line: String) {
            kept.withLock {
                $0 += line + "\n"
                if $0.utf8.count > 65536 { $0 = String($0.suffix(60000)) }
            }
        }

        struct Handler: LogHandler {
            let lines: Lines
            var metadata: Logger.Metadata = [:]
            var logLevel: Logger.Level = .info

            subscript(metadataKey key: String) -> Logger.Metadata.Value? {
                get { metadata[key] }
                set { metadata[key] = newValue }
            }

            func log(event: LogEvent) {
                lines.append("\(event.level): \(event.message) \(metadata.merging(event.metadata ?? [:]) { $1 })")
            }
        }
    }
}
