import ArgumentParser
import Foundation
import NetRunnerHTTP
import NetRunnerHubServer
import NetRunnerServer
import NetRunnerTestSupport
import Testing

@testable import NetRunnerNet

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 43, finding 8: bodies sent just above the rate floor (600 bytes/s) held every
/// connection of an open server. A request now ends within `--request-timeout` however fast it
/// comes, and one client address holds at most `--max-connections-per-address` connections;
/// more are closed at accept. The servers run in process (``LiveServer``), on a real socket.
@Suite("Server connections: the whole-request deadline, connections per address", .serialized)
struct RequestBoundsTests {
    typealias Setup = RequestRateTests.Setup
    typealias Kind = ServerConnectionTests.Kind

    @Test(
        "A body sent at 2 kB/s, four times the rate floor, is cut at --request-timeout: 408, Connection: close, closed",
        // serve only: the hub shares the floor's code, and a debug-build hub stopped with an
        // upload in flight trips SQLiteNIO's assertion that its connection was closed (a crash
        // of the whole test process, seen once in a loaded CI run; not a release-build failure).
        arguments: [Setup.serve])
    func requestDeadline(_ setup: Setup) async throws {
        // LiveServer's --idle-timeout is 900 s: the floor alone gives this body 900 s and more.
        try await ServerConnectionTests.Running.with(setup.kind, setup.arguments + ["--request-timeout", "2"]) {
            server in
            let size = 200_000
            let connection = try RawConnection(port: server.port)
            let started = ContinuousClock.now
            await connection.send(
                "POST \(setup.upload) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(setup.authorization)"
                    + "Content-Type: application/octet-stream\r\nContent-Length: \(size)\r\n\r\n")
            let chunk = [UInt8](repeating: 0x41, count: 500)
            var (bytes, closed, sent) = ([UInt8](), false, 0)
            // 500 bytes every 250 ms (the sender's pace, not a wait for the server): 2 kB/s, the
            // body whole after 100 s. Without the deadline nothing cuts it while it keeps coming.
            while !closed, sent < size, ContinuousClock.now - started < .seconds(95) {
                let read = await connection.readThenSend(chunk)
                bytes += read.bytes
                closed = read.closed
                if !closed { sent += chunk.count }
                try await Task.sleep(for: .milliseconds(250))
            }
            let after = ContinuousClock.now - started
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(closed, "\(setup): still open after \(after), \(sent) bytes sent: \(text.prefix(300))")
            #expect(RequestRateTests.lastStatus(bytes) == 408, "\(setup): \(text.prefix(600))")
            #expect(text.contains("Connection: close"), "\(setup): \(text.prefix(600))")
            #expect(text.contains("took too long"), "\(setup): cut by the floor, not the deadline: \(text.prefix(600))")
            // 2 s of the server waiting for the body (time it spends not reading does not count);
            // 90 s bounds a loaded CI machine (53 s seen beside the connection-budget and gate
            // flood suites), still short of the 100 s the whole body takes.
            #expect(after >= .milliseconds(1900) && after < .seconds(90), "\(setup): cut after \(after)")
            #expect(sent < size, "\(setup): the whole body got through")
            // Closed first: a body still coming would hold the stop for --drain-timeout.
            shutdown(connection.socket, Int32(SHUT_RDWR))
            #expect(await server.stopAndTime().status == 0)
        }
    }

    @Test(
        "--max-connections-per-address 4: a 5th connection from one address is closed unanswered; the 4 still answer, another address gets in, and one closed makes room",
        arguments: Kind.allCases)
    func perAddressCap(_ kind: Kind) async throws {
        try await ServerConnectionTests.Running.with(kind, ["--max-connections-per-address", "4"]) { server in
            let port = server.port
            // From 127.0.0.2: the harness's own connections (the readiness probe) are 127.0.0.1's.
            let client = "127.0.0.2"
            let request = "GET \(kind.probe) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            var held = try (0..<4).map { _ in try RawConnection(port: port, from: client) }
            // Each answered: accepted, and counted, before the fifth comes.
            for (index, connection) in held.enumerated() {
                let status = await Self.answer(to: request, on: connection)
                #expect(status == 200, "\(kind): connection \(index): \(status.map(String.init) ?? "no answer")")
            }
            let fifth = try RawConnection(port: port, from: client)
            await fifth.send(request)
            // Without the cap it is answered and kept open: the read ends at its deadline.
            let refused = await fifth.readUntilClosed(timeout: .seconds(20))
            #expect(
                refused.closed && refused.bytes.isEmpty,
                "\(kind): the fifth: closed \(refused.closed), \(String(decoding: refused.bytes, as: UTF8.self).prefix(200))"
            )
            // Another address is not held back by this one's cap.
            let other = try RawConnection(port: port, from: "127.0.0.3")
            #expect(await Self.answer(to: request, on: other) == 200, "\(kind): 127.0.0.3")
            // The four still answer, on the same connections.
            for (index, connection) in held.enumerated() {
                let status = await Self.answer(to: request, on: connection)
                #expect(status == 200, "\(kind): connection \(index) again: \(status.map(String.init) ?? "no answer")")
            }
            #expect(server.server.log.contains("closed at accept"), "\(kind): \(server.server.log.suffix(2000))")
            // One closed: once the server has seen it go, a new connection from the address is taken.
            shutdown(held[0].socket, Int32(SHUT_RDWR))
            held.removeFirst()
            try await Eventually.wait(
                for: "\(kind): a connection from \(client) answered again", upTo: .seconds(30),
                every: .milliseconds(100)
            ) {
                let connection = try RawConnection(port: port, from: client)
                return await Self.answer(to: request, on: connection, within: .seconds(10)) == 200
            }
            for connection in held { shutdown(connection.socket, Int32(SHUT_RDWR)) }
            #expect(await server.stopAndTime().status == 0)
        }
    }

    @Test("Defaults: --request-timeout 300 s for serve, an hour for the hub, 0 for none; 64 connections per address")
    func defaults() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-request-bounds")
        defer { folder.remove() }
        let serve = try NetRunnerNetCommand.Serve.parse([])
        #expect(serve.connections.request(or: InferenceServer.Configuration().requestTimeout) == .seconds(300))
        #expect(serve.connections.maximumConnectionsPerAddress == 64)
        let hub = try NetRunnerNetCommand.Hub.Serve.parse(["--data", folder.url.path]).makeHub().configuration
        #expect(hub.requestTimeout == .seconds(3600) && hub.maximumConnectionsPerAddress == 64)
        let off = try NetRunnerNetCommand.Hub.Serve.parse([
            "--data", folder.url.path, "--request-timeout", "0", "--max-connections-per-address", "0",
        ]).makeHub().configuration
        #expect(off.requestTimeout == nil && off.maximumConnectionsPerAddress == 0)
        #expect(throws: (any Error).self) { try NetRunnerNetCommand.Serve.parse(["--request-timeout", "-1"]) }
        #expect(throws: (any Error).self) {
            try NetRunnerNetCommand.Serve.parse(["--max-connections-per-address", "-1"])
        }
    }

    @Test("Connections count per IPv4 address and per IPv6 /64, an IPv4-mapped address as IPv4")
    func addressKeys() {
        #expect(AddressConnectionCap.key(ipAddress: "203.0.113.7") == "203.0.113.7")
        #expect(AddressConnectionCap.key(ipAddress: "::ffff:203.0.113.7") == "203.0.113.7")
        let network = AddressConnectionCap.key(ipAddress: "2001:db8:0:1:aaaa::1")
        #expect(network == "2001:db8:0:1::/64")
        #expect(AddressConnectionCap.key(ipAddress: "2001:db8:0:1:bbbb:cccc:dddd:2") == network)
        #expect(AddressConnectionCap.key(ipAddress: "2001:db8:0:2::1") == "2001:db8:0:2::/64")
    }

    /// Sends `request` on a keep-alive connection and reads its answer whole (its head and its
    /// `Content-Length` of body), or until the connection closes or `limit` passes.
    ///
    /// - Returns: The answer's status; `nil` without one.
    static func answer(to request: String, on connection: RawConnection, within limit: Duration = .seconds(20)) async
        -> Int?
    {
        await connection.send(request)
        let deadline = ContinuousClock.now + limit
        var bytes: [UInt8] = []
        while ContinuousClock.now < deadline {
            let read = await connection.readUntilClosed(timeout: .milliseconds(50))
            bytes += read.bytes
            if read.closed || isWhole(bytes) { break }
        }
        return RawConnection.status(bytes)
    }

    /// Whether `bytes` hold an answer's head and its body (its `Content-Length`, or chunks to the
    /// last).
    static func isWhole(_ bytes: [UInt8]) -> Bool {
        guard let end = bytes.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound else { return false }
        let head = String(decoding: bytes[..<end], as: UTF8.self).lowercased()
        if head.contains("transfer-encoding: chunked") {
            return bytes.count > end && bytes.suffix(5) == Array("0\r\n\r\n".utf8)[...]
        }
        let length = head.components(separatedBy: "\r\n").first { $0.hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) }
        return bytes.count - end >= (length ?? 0)
    }
}
