import Foundation
import NetRunnerTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The request rate floor of both servers (issue 32, finding 2) and what a keyed server does
/// with a request it will not serve: a body dripped slower than 500 bytes/s is cut once
/// `--idle-timeout` is spent (408), on the first request of a connection or a later one, while
/// good requests get through; a body sent without a key is answered 401 and its connection
/// closed at once, its body dropped unhandled (for at most two seconds); a WebSocket is never
/// cut; `HEAD` follows `GET` on a keyed server's open routes. The servers run in process
/// (``LiveServer``), on a real socket.
@Suite("Server connections: slow bodies, bodies without a key, HEAD", .serialized)
struct RequestRateTests {
    /// The servers under test: `serve` open and keyed, and a private hub.
    enum Setup: String, CaseIterable, CustomStringConvertible {
        case serve, keyedServe, privateHub
        var description: String { rawValue }

        var kind: ServerConnectionTests.Kind { self == .privateHub ? .hub : .serve }
        var arguments: [String] {
            switch self {
            case .serve: []
            case .keyedServe: ["--api-key", "s3cret"]
            case .privateHub: ["--private"]
            }
        }
        /// `Authorization: Bearer KEY\r\n`, or nothing where no key is needed.
        var authorization: String {
            switch self {
            case .serve: ""
            case .keyedServe: "Authorization: Bearer s3cret\r\n"
            case .privateHub: "Authorization: Bearer \(HubProcess.adminKey)\r\n"
            }
        }
        /// A route that reads a request body.
        var upload: String {
            self == .privateHub ? "/v1/models/drip/versions" : "/v1/models/mobilenet-v2-1.0-224-uint8/classify"
        }
    }

    /// A request's head with a 100 kB body announced, and none of it sent.
    static func uploadHead(_ setup: Setup) -> String {
        "POST \(setup.upload) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(setup.authorization)"
            + "Content-Type: application/octet-stream\r\nContent-Length: 100000\r\n\r\n"
    }

    /// The status of the last response in `bytes`.
    static func lastStatus(_ bytes: [UInt8]) -> Int? {
        String(decoding: bytes, as: UTF8.self).components(separatedBy: "HTTP/1.1 ").last.flatMap { Int($0.prefix(3)) }
    }

    @Test(
        "A body dripped at 2 bytes/s is cut after --idle-timeout (408), on a connection's first request or a later one, and a good request gets in",
        arguments: Setup.allCases)
    func slowBody(_ setup: Setup) async throws {
        let drips = 4
        try await ServerConnectionTests.Running.with(
            setup.kind, setup.arguments + ["--idle-timeout", "2", "--max-connections", "\(drips)"]
        ) { server in
            let probe = "GET \(setup.kind.probe) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(setup.authorization)\r\n"
            let baseline = server.sockets()
            var connections: [RawConnection] = []
            for index in 0..<drips {
                let connection = try RawConnection(port: server.port)
                // Every other one a keep-alive request after a good one, in one write: two writes
                // a starved test sends seconds apart would meet the idle timeout between them.
                await connection.send((index % 2 == 1 ? probe : "") + Self.uploadHead(setup))
                connections.append(connection)
            }
            if let baseline { try await server.waitForSockets(atLeast: baseline + drips, limit: .seconds(5)) }
            let started = ContinuousClock.now
            // Every connection the server takes is dripping: a good one waits to be accepted.
            let port = server.port
            let goodRequest =
                "GET \(setup.kind.probe) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(setup.authorization)Connection: close\r\n\r\n"
            let good = Task {
                let answer = try await RawHTTP.exchange(port: port, goodRequest, timeout: .seconds(30))
                return (answer.status, ContinuousClock.now - started)
            }
            var received = [[UInt8]](repeating: [], count: drips)
            var closedAfter = [Duration?](repeating: nil, count: drips)
            // Bounds for a loaded machine (the whole suite runs in parallel on 2 cores): without the
            // floor no drip is ever cut; with it each is cut after about 2 s.
            while closedAfter.contains(where: { $0 == nil }), ContinuousClock.now - started < .seconds(60) {
                for (index, connection) in connections.enumerated() where closedAfter[index] == nil {
                    let (bytes, closed) = await connection.readThenSend(Array("x".utf8))
                    received[index] += bytes
                    if closed { closedAfter[index] = ContinuousClock.now - started }
                }
                try await Task.sleep(for: .milliseconds(500))
            }
            for index in 0..<drips {
                let text = String(decoding: received[index], as: UTF8.self)
                #expect(closedAfter[index] != nil, "\(setup): drip \(index) still open after 60 s: \(text.prefix(300))")
                // 2 s, and 1 s more per 500 bytes: a few milliseconds here; without the floor never.
                // 50 s is the bound on a loaded CI machine (22 s was seen with the whole suite in
                // parallel on 2 cores).
                if let after = closedAfter[index] {
                    #expect(after < .seconds(50), "\(setup): drip \(index) cut after \(after)")
                }
                #expect(Self.lastStatus(received[index]) == 408, "\(setup): drip \(index): \(text.prefix(600))")
                #expect(text.contains("Connection: close"), "\(setup): drip \(index): \(text.prefix(600))")
                if index % 2 == 1 { #expect(RawConnection.status(received[index]) == 200, "\(text.prefix(300))") }
            }
            let (status, waited) = try await good.value
            #expect(
                status == 200, "\(setup): the good request: \(status.map(String.init) ?? "no answer") after \(waited)")
            // Answered at all is the check (the exchange gives up after 30 s); a loaded CI machine
            // took up to 25.3 s with the whole suite in parallel on 2 cores.
            #expect(waited < .seconds(60), "\(setup): the good request waited \(waited)")
            #expect(await server.stopAndTime().status == 0)
        }
    }

    @Test(
        "A body sent fast enough is not cut: 51 kB at 6 kB/s, for 4 times --idle-timeout",
        arguments: [Setup.serve, Setup.privateHub])
    func steadyBody(_ setup: Setup) async throws {
        // --idle-timeout 2: the head alone has that long before the first 3 kB's credit counts, and
        // with 1 s a fresh-clone CI run saw the body cut 0.55 s in (the server's loop and the test
        // both starved in the suite's heaviest minute).
        try await ServerConnectionTests.Running.with(setup.kind, setup.arguments + ["--idle-timeout", "2"]) { server in
            let connection = try RawConnection(port: server.port)
            let chunks = 17
            let head =
                "POST \(setup.upload) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(setup.authorization)"
                + "Content-Type: application/octet-stream\r\nContent-Length: \(chunks * 3_000)\r\n"
                + "Connection: close\r\n\r\n"
            // The first 3 kB in one send with the head: its 6 s of credit count from the start
            // (the head alone has only --idle-timeout).
            await connection.send(Array(head.utf8) + [UInt8](repeating: 0x41, count: 3_000))
            let started = ContinuousClock.now
            // 3 kB every half second, well above 500 bytes/s: the body is whole after 8 s. Paced
            // on a thread of its own: a test task starved 8 s on a loaded machine is a slow
            // client, and was cut as one.
            let paced = await connection.sendPaced(
                [UInt8](repeating: 0x41, count: 3_000), count: chunks - 1, every: .milliseconds(500))
            var bytes = paced.bytes
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(!paced.closed, "\(setup): cut after \(paced.after): \(text.prefix(400))")
            let rest = await connection.readUntilClosed(timeout: .seconds(30))
            bytes += rest.bytes
            #expect(ContinuousClock.now - started > .seconds(8))
            // Not a JPEG, not a model: the server's own answer, not the floor's.
            let status = Self.lastStatus(bytes)
            #expect(status != 408 && status != nil, "\(setup): \(String(decoding: bytes, as: UTF8.self).prefix(400))")
            #expect(await server.stopAndTime().status == 0)
        }
    }

    @Test(
        "Without a key, a body is answered 401 with Connection: close at once, its connection closed and its body dropped",
        arguments: [Setup.keyedServe, Setup.privateHub])
    func keylessBody(_ setup: Setup) async throws {
        try await ServerConnectionTests.Running.with(setup.kind, setup.arguments + ["--idle-timeout", "30"]) { server in
            let connection = try RawConnection(port: server.port)
            await connection.send(
                "POST \(setup.upload) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n"
                    + "Content-Length: 10000000\r\n\r\n" + String(repeating: "x", count: 1000))
            let started = ContinuousClock.now
            // Without the fix the server drains the 10 MB the client never sends: open for good.
            let (bytes, closed) = await connection.readUntilClosed(timeout: .seconds(20))
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(RawConnection.status(bytes) == 401, "\(setup): \(text.prefix(400))")
            #expect(text.lowercased().contains("connection: close"), "\(setup): \(text.prefix(400))")
            #expect(closed, "\(setup): still open after \(ContinuousClock.now - started) (the body drained?)")
            // A client that sends its whole body before it reads (most do, uploading a model) still
            // gets the 401: the connection lingers, dropping the body, instead of resetting it.
            let whole = try RawConnection(port: server.port)
            let size = 8 << 20
            let sent = await whole.send(
                Array(
                    ("POST \(setup.upload) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n"
                        + "Content-Length: \(size)\r\n\r\n").utf8) + [UInt8](repeating: 0x79, count: size))
            // A reset while sending is where a client such as curl gives up, the 401 unread.
            #expect(sent, "\(setup): the body was cut while being sent (errno \(whole.sendError))")
            let answer = await whole.readUntilClosed(timeout: .seconds(20))
            #expect(
                RawConnection.status(answer.bytes) == 401 && answer.closed,
                "\(setup): \(String(decoding: answer.bytes, as: UTF8.self).prefix(400)) (reset: \(answer.bytes.isEmpty))"
            )
            #expect(await server.stopAndTime().status == 0)
        }
    }

    @Test("A WebSocket is not cut by the floor: pings every half second past --idle-timeout are answered")
    func webSocket() async throws {
        try await ServerConnectionTests.Running.with(.serve, ["--idle-timeout", "1"]) { server in
            let connection = try RawConnection(port: server.port)
            await connection.send(
                "GET /v1/live?model=mobilenet-v2-1.0-224-uint8 HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n"
                    + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    + "Sec-WebSocket-Version: 13\r\n\r\n")
            var (bytes, closed) = await connection.readUntilClosed(timeout: .milliseconds(500))
            #expect(RawConnection.status(bytes) == 101, "\(String(decoding: bytes, as: UTF8.self))")
            let started = ContinuousClock.now
            // Two masked, empty pings, sent a byte at a time: slower than any HTTP request may come.
            let ping: [UInt8] = [0x89, 0x80, 0, 0, 0, 0]
            for byte in ping + ping where !closed {
                await connection.send([byte])
                try await Task.sleep(for: .milliseconds(400))
                let read = await connection.readUntilClosed(timeout: .milliseconds(1))
                bytes += read.bytes
                closed = read.closed
            }
            let last = await connection.readUntilClosed(timeout: .milliseconds(500))
            bytes += last.bytes
            #expect(!closed && !last.closed, "cut after \(ContinuousClock.now - started)")
            // Two pongs (0x8A 0x00) after the 101's head.
            let head = bytes.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound ?? bytes.endIndex
            #expect(bytes[head...].filter { $0 == 0x8A }.count == 2, "\(bytes[head...])")
            // Closed first: an open socket would hold SIGTERM's drain.
            shutdown(connection.socket, Int32(SHUT_RDWR))
            #expect(await server.stopAndTime().status == 0)
        }
    }

    @Test("HEAD follows GET on a keyed server: open routes 200 without a key, the rest 401")
    func head() async throws {
        try await LiveServer.serve(["--threads", "1", "--api-key", "s3cret"]) { server in
            let port = server.port
            func status(_ method: String, _ path: String, key: Bool = false) async throws -> Int? {
                let authorization = key ? "Authorization: Bearer s3cret\r\n" : ""
                return try await RawHTTP.exchange(
                    port: port,
                    "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(authorization)Connection: close\r\n\r\n"
                ).status
            }
            let open = ["/v2/health/live", "/v2/health/ready", "/v1/models", "/v2", "/openapi.json", "/metrics"]
            for path in open {
                #expect(try await status("GET", path) == 200, "GET \(path)")
                #expect(try await status("HEAD", path) == 200, "HEAD \(path)")
            }
            for path in ["/v1/albums", "/v1/imports", "/v1/streams"] {
                #expect(try await status("HEAD", path) == 401, "HEAD \(path) without a key")
                let get = try await status("GET", path, key: true)
                #expect(try await status("HEAD", path, key: true) == get, "HEAD \(path) with the key")
            }
        }
    }
}
