import Foundation
import NetRunnerTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 54, finding 3: `--max-connections-per-address` stops one address, but slow bodies from
/// many addresses (eight hosts, or one IPv6 /61) still held every connection, and a good request
/// from another address waited for them. Near `--max-connections` the idle connections and the
/// slowest bodies now give way (``ConnectionBudget``). The servers run in process
/// (``LiveServer``), on a real socket; 127.0.0.2 … 127.0.0.18 are all loopback on Linux.
@Suite("Server connections: the connection budget shared by every address", .serialized)
struct ConnectionBudgetTests {
    typealias Setup = RequestRateTests.Setup

    /// Tells the dripping thread to stop.
    final class Stop: Sendable {
        let stopped = Atomic<Bool>(false)
    }

    @Test(
        "16 addresses x 8 bodies dripped at 6 bytes/s, --max-connections 64: the slowest give way, a good request from a 17th address is answered",
        arguments: [Setup.serve, Setup.privateHub])
    func slowBodiesFromManyAddresses(_ setup: Setup) async throws {
        // --max-connections-per-address 8: each address within its cap, 128 bodies for 64 slots.
        // LiveServer's --idle-timeout is 900 s: the floor alone cuts none of them within the test.
        let arguments = setup.arguments + ["--max-connections", "64", "--max-connections-per-address", "8"]
        try await ServerConnectionTests.Running.with(setup.kind, arguments) { server in
            let port = server.port
            let baseline = server.sockets() ?? 0
            let drips = try await OffPool.run {
                try (2...17).flatMap { host in
                    try (0..<8).map { _ in try RawConnection(port: port, from: "127.0.0.\(host)") }
                }
            }
            let stop = Stop()
            let head = Array(RequestRateTests.uploadHead(setup).utf8)
            let dripping = Task { await OffPool.run { Self.drip(drips, head: head, until: stop) } }
            // Every slot taken (or nearly: the first give way a second after they came).
            try await server.waitForSockets(atLeast: baseline + 56, limit: .seconds(10))
            let request: [UInt8]
            switch setup.kind {
            case .serve:
                let photo = try Fixtures.data("Tests/Fixtures/Photos/test/coffee.jpg")
                request =
                    Array(
                        ("POST \(setup.upload) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: image/jpeg\r\n"
                            + "Content-Length: \(photo.count)\r\nConnection: close\r\n\r\n").utf8) + Array(photo)
            case .hub:
                request = Array(
                    "GET \(setup.kind.probe) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(setup.authorization)Connection: close\r\n\r\n"
                        .utf8)
            }
            let started = ContinuousClock.now
            let good = try RawConnection(port: port, from: "127.0.0.18")
            await good.send(request)
            // Without the budget the request waits in the kernel's queue behind the 64 bodies
            // for --idle-timeout (900 s here): no answer within the 10 s.
            let answer = await good.readUntilClosed(timeout: .seconds(10))
            let waited = ContinuousClock.now - started
            let text = String(decoding: answer.bytes, as: UTF8.self)
            #expect(RawConnection.status(answer.bytes) == 200, "\(setup): after \(waited): \(text.prefix(300))")
            if setup.kind == .serve { #expect(text.contains("espresso"), "\(setup): \(text.prefix(300))") }
            // Still answering: a second good request.
            let again = try RawConnection(port: port, from: "127.0.0.18")
            await again.send(request)
            let second = await again.readUntilClosed(timeout: .seconds(10))
            #expect(RawConnection.status(second.bytes) == 200, "\(setup): the second good request")
            stop.stopped.store(true, ordering: .relaxed)
            let results = await dripping.value
            let closed = results.filter(\.closed)
            #expect(!closed.isEmpty, "\(setup): no slow body gave way")
            for result in closed where !result.bytes.isEmpty {
                let status = RawConnection.status(result.bytes)
                #expect(status == 408, "\(setup): \(String(decoding: result.bytes, as: UTF8.self).prefix(300))")
            }
            #expect(server.server.log.contains("to make room"), "\(setup): \(server.server.log.suffix(2000))")
            // Closed, and seen closed by the server, before it stops: an upload in flight would
            // hold the drain.
            for connection in drips + [good, again] { shutdown(connection.socket, Int32(SHUT_RDWR)) }
            try? await Eventually.wait(for: "the slow bodies gone", upTo: .seconds(10)) {
                (server.sockets() ?? 0) <= baseline
            }
            #expect(await server.stopAndTime().status == 0)
        }
    }

    /// Sends `head` and one byte on each connection, then 3 bytes every half second (6 bytes/s)
    /// on each still open, reading what comes meanwhile, until `stop` (what has come by then is
    /// read once more): what came on each, and whether the server closed it.
    static func drip(_ connections: [RawConnection], head: [UInt8], until stop: Stop) -> [(
        bytes: [UInt8], closed: Bool
    )] {
        var results = [(bytes: [UInt8], closed: Bool)](repeating: ([], false), count: connections.count)
        var buffer = [UInt8](repeating: 0, count: 4096)
        var piece = head + Array("x".utf8)
        var next = ContinuousClock.now
        while true {
            let stopping = stop.stopped.load(ordering: .relaxed)
            let sending = !stopping && ContinuousClock.now >= next
            for (index, connection) in connections.enumerated() where !results[index].closed {
                while true {
                    let count = buffer.withUnsafeMutableBytes {
                        recv(connection.socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
                    }
                    if count > 0 {
                        results[index].bytes += buffer[0..<count]
                        continue
                    }
                    if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) { results[index].closed = true }
                    break
                }
                if sending, !results[index].closed {
                    _ = piece.withUnsafeBytes {
                        send(connection.socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                    }
                }
            }
            if stopping { return results }
            if sending {
                piece = Array("xyz".utf8)
                next = ContinuousClock.now + .milliseconds(500)
            }
            // The client's pace, not a wait for the server.
            Thread.sleep(forTimeInterval: 0.02)
        }
    }
}
