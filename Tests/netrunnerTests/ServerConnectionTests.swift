import Foundation
import NetRunnerTestSupport
import Testing

/// Both servers (`serve`, `hub serve`) against connections that never finish: half-sent headers
/// and idle connections are closed after `--idle-timeout`, at most `--max-connections` are open
/// at once, malformed requests get 400 and are closed, and SIGTERM stops within
/// `--drain-timeout` whatever is half-sent.
@Suite("Server connections: timeouts, limits, malformed requests, draining", .serialized)
struct ServerConnectionTests {
    enum Kind: String, CaseIterable, CustomStringConvertible {
        case serve, hub
        var description: String { rawValue }
        /// A cheap GET that answers 200.
        var probe: String { self == .serve ? "/v2/health/live" : "/v1/models" }
    }

    /// A running server of either kind.
    final class Running {
        let port: Int
        let stopAndTime: () -> (status: Int32, seconds: Double)
        let pid: Int32?
        let cleanup: () -> Void

        init(_ kind: Kind, _ arguments: [String]) async throws {
            switch kind {
            case .serve:
                let server = try await ServerProcess(["--threads", "1"] + arguments)
                port = server.base.port ?? 0
                pid = server.process.processIdentifier
                stopAndTime = {
                    let started = Date()
                    server.process.terminate()
                    let deadline = Date().addingTimeInterval(30)
                    while server.process.isRunning, Date() < deadline { usleep(20_000) }
                    let seconds = Date().timeIntervalSince(started)
                    if server.process.isRunning { kill(server.process.processIdentifier, SIGKILL) }
                    server.process.waitUntilExit()
                    return (server.process.terminationStatus, seconds)
                }
                cleanup = {}
            case .hub:
                let folder = try TemporaryFolder(prefix: "netrunner-hub-connections")
                let hub = try HubProcess(data: folder.url.path, arguments: arguments)
                port = URL(string: hub.address)?.port ?? 0
                pid = nil
                stopAndTime = {
                    let started = Date()
                    let status = hub.stop()
                    return (status, Date().timeIntervalSince(started))
                }
                cleanup = { folder.remove() }
            }
        }

        /// The sockets the process holds open.
        func sockets() -> Int? {
            guard let pid else { return nil }
            let folder = "/proc/\(pid)/fd"
            guard let entries = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return nil }
            return entries.filter {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + $0))?.hasPrefix("socket:")
                    ?? false
            }.count
        }

        /// Waits until the process holds at least `count` sockets, or `limit` has passed (a
        /// condition with a deadline, never a fixed sleep); returns the last count seen.
        @discardableResult
        func waitForSockets(atLeast count: Int, limit: Duration = .seconds(10)) async throws -> Int? {
            let deadline = ContinuousClock.now + limit
            var held = sockets()
            while let seen = held, seen < count, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
                held = sockets()
            }
            return held
        }
    }

    @Test(
        "Half-sent headers: at most --max-connections held, each closed after --idle-timeout, good requests answered",
        arguments: Kind.allCases)
    func halfSentHeaders(_ kind: Kind) async throws {
        let server = try await Running(kind, ["--idle-timeout", "2", "--max-connections", "40"])
        defer { server.cleanup() }
        let baseline = server.sockets()
        let started = ContinuousClock.now
        let slow = try (0..<50).map { _ in
            let connection = try RawConnection(port: server.port)
            connection.send("GET \(kind.probe) HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a")
            return connection
        }
        // The server has accepted as many as it will (up to --max-connections) once 40 are open;
        // a loaded machine may take longer, and the count below is checked either way.
        if let baseline { try await server.waitForSockets(atLeast: baseline + 40, limit: .seconds(2)) }
        if let baseline, let held = server.sockets() {
            // NIO accepts a few connections per read before it looks at the limit again.
            #expect(held - baseline <= 40 + 4, "\(held - baseline) connections open at once")
        }
        // A good request waits at most for the slow ones' timeout.
        let good = try RawHTTP.get(port: server.port, kind.probe)
        #expect(good.status == 200, "\(good.text.prefix(200))")
        #expect(
            ContinuousClock.now - started < .seconds(12), "the good request waited \(ContinuousClock.now - started)")
        for (index, connection) in slow.enumerated() {
            let (bytes, closed) = connection.readUntilClosed(timeout: .seconds(15) - (ContinuousClock.now - started))
            #expect(closed, "slow connection \(index) still open after \(ContinuousClock.now - started)")
            if let status = RawConnection.status(bytes) { #expect(status == 408 || status == 400) }
        }
        #expect(ContinuousClock.now - started < .seconds(15))
        let stopped = server.stopAndTime()
        #expect(stopped.status == 0)
    }

    @Test("An idle keep-alive connection is closed after --idle-timeout", arguments: Kind.allCases)
    func idleConnection(_ kind: Kind) async throws {
        let server = try await Running(kind, ["--idle-timeout", "1"])
        defer { server.cleanup() }
        let connection = try RawConnection(port: server.port)
        let started = ContinuousClock.now
        connection.send("GET \(kind.probe) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let (bytes, closed) = connection.readUntilClosed(timeout: .seconds(10))
        #expect(RawConnection.status(bytes) == 200)
        #expect(closed, "still open after 10 s")
        #expect(ContinuousClock.now - started >= .milliseconds(900))
        #expect(server.stopAndTime().status == 0)
    }

    @Test("Malformed requests are answered 400 and closed at once", arguments: Kind.allCases)
    func malformed(_ kind: Kind) async throws {
        let server = try await Running(kind, ["--idle-timeout", "30"])
        defer { server.cleanup() }
        let post = kind == .serve ? "/v1/models/mobilenet-v2-1.0-224-uint8/classify" : "/v1/models/m/versions"
        let requests = [
            "control byte in a header": "GET \(kind.probe) HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Bad: a\u{01}b\r\n\r\n",
            "Content-Length -1": "POST \(post) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -1\r\n\r\nabc",
            "NUL in the path": "GET /v2/he\u{0}alth HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
            "Content-Length with Transfer-Encoding":
                "POST \(post) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        ]
        for (what, request) in requests.sorted(by: { $0.key < $1.key }) {
            for first in [true, false] {
                // As the first request of a connection, and after a good one on the same connection.
                let connection = try RawConnection(port: server.port)
                if !first { connection.send("GET \(kind.probe) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") }
                connection.send(request)
                let started = ContinuousClock.now
                let (bytes, closed) = connection.readUntilClosed(timeout: .seconds(5))
                let text = String(decoding: bytes, as: UTF8.self)
                #expect(closed, "\(what) (first: \(first)): not closed after \(ContinuousClock.now - started)")
                let last = text.components(separatedBy: "HTTP/1.1 ").last.flatMap { Int($0.prefix(3)) }
                #expect(last == 400, "\(what) (first: \(first)): \(text.prefix(400))")
            }
        }
        #expect(try RawHTTP.get(port: server.port, kind.probe).status == 200, "still answering")
        #expect(server.stopAndTime().status == 0)
    }

    @Test("SIGTERM stops within --drain-timeout with half-sent headers and a half-sent body", arguments: Kind.allCases)
    func drain(_ kind: Kind) async throws {
        let server = try await Running(kind, ["--idle-timeout", "60", "--drain-timeout", "2"])
        defer { server.cleanup() }
        let post = kind == .serve ? "/v1/models/mobilenet-v2-1.0-224-uint8/classify" : "/v1/models/m/versions"
        let baseline = server.sockets()
        let headers = try RawConnection(port: server.port)
        headers.send("GET \(kind.probe) HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a")
        let body = try RawConnection(port: server.port)
        body.send(
            "POST \(post) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(HubProcess.adminKey)\r\n"
                + "Content-Type: image/jpeg\r\nContent-Length: 100000\r\n\r\nabc")
        // Both are accepted by the server before the signal.
        if let baseline { try await server.waitForSockets(atLeast: baseline + 2) }
        let (status, seconds) = server.stopAndTime()
        #expect(seconds < 8, "stopped after \(seconds) s")
        #expect(status == 0, "exit status \(status)")
    }
}
