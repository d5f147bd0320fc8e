import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP connection to a loopback server, bytes exactly as given (no client library to tidy a
/// path, add headers or refuse a malformed request), for the servers' connection tests.
///
/// Sending and reading block, so they run on a thread of their own (``OffPool``): a test's
/// waits never hold one of the few threads Swift's concurrency runs on, which a server in the
/// test process needs.
final class RawConnection: @unchecked Sendable {
    let socket: Int32
    /// `errno` of the last send that failed.
    private(set) var sendError: Int32 = 0

    /// Connects to 127.0.0.1:`port`, from `source` (another loopback address, 127.0.0.2) if given.
    init(port: Int, from source: String? = nil) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw RawHTTPError(message: "socket: \(errno)") }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else {
                close(socket)
                throw RawHTTPError(message: "bind \(source): \(errno)")
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(socket)
            throw RawHTTPError(message: "connect: \(errno)")
        }
    }

    deinit { close(socket) }

    /// The connection's own port (the server's remote port for it).
    var localPort: Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Sends bytes. A failure (the server having closed or reset the connection) is only
    /// returned: reading tells the rest.
    ///
    /// - Returns: Whether every byte was sent.
    @discardableResult
    func send(_ bytes: [UInt8]) async -> Bool {
        await OffPool.run { self.sendBlocking(bytes) }
    }

    @discardableResult
    func send(_ text: String) async -> Bool { await send(Array(text.utf8)) }

    /// Connects `count` times and sends `text` on each, all on one thread.
    ///
    /// - Parameters:
    ///   - count: How many connections.
    ///   - port: The server's port.
    ///   - text: What each sends.
    /// - Returns: The connections.
    /// - Throws: ``RawHTTPError`` when a connection fails.
    static func open(_ count: Int, port: Int, sending text: String) async throws -> [RawConnection] {
        try await OffPool.run {
            try (0..<count).map { _ in
                let connection = try RawConnection(port: port)
                _ = connection.sendBlocking(Array(text.utf8))
                return connection
            }
        }
    }

    /// A drip: what has come is read first, and only if the server has not closed is one more
    /// byte sent, both on one thread. A byte sent after the server's lingering close has ended
    /// is answered with a reset, which loses an answer (a 408) the client has not read yet.
    ///
    /// - Parameter bytes: What to send when the connection is still open.
    /// - Returns: What came, and whether the server closed.
    func readThenSend(_ bytes: [UInt8]) async -> (bytes: [UInt8], closed: Bool) {
        await OffPool.run {
            let read = self.readBlocking(timeout: .milliseconds(1))
            if !read.closed { _ = self.sendBlocking(bytes) }
            return read
        }
    }

    /// Sends `bytes` `count` times, one every `interval`, reading what comes before each, all on
    /// one thread of its own: the pace holds however busy Swift's concurrency threads are (a
    /// test task woken from `Task.sleep` on a loaded 2-core machine was seen 8 s late).
    ///
    /// - Parameters:
    ///   - bytes: One piece.
    ///   - count: How many pieces.
    ///   - interval: The time from one piece to the next (the first is sent after one interval).
    /// - Returns: What came meanwhile, whether the server closed (no more is sent then), and
    ///   when it did, from the call.
    func sendPaced(_ bytes: [UInt8], count: Int, every interval: Duration) async -> (
        bytes: [UInt8], closed: Bool, after: Duration
    ) {
        await OffPool.run {
            let started = ContinuousClock.now
            var received: [UInt8] = []
            for piece in 1...max(1, count) {
                let read = self.readBlocking(until: started + interval * piece)
                received += read.bytes
                if read.closed { return (received, true, ContinuousClock.now - started) }
                _ = self.sendBlocking(bytes)
            }
            return (received, false, ContinuousClock.now - started)
        }
    }

    private func sendBlocking(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let rest = UnsafeRawBufferPointer(rebasing: buffer[offset...])
                let sent = Glibc.send(socket, rest.baseAddress, rest.count, Int32(MSG_NOSIGNAL))
                if sent < 0, errno == EINTR { continue }
                guard sent > 0 else {
                    sendError = errno
                    return false
                }
                offset += sent
            }
            return true
        }
    }

    /// Reads until the server closes the connection or `timeout` passes: what came, and whether
    /// the server closed.
    func readUntilClosed(timeout: Duration) async -> (bytes: [UInt8], closed: Bool) {
        await OffPool.run { self.readBlocking(timeout: timeout) }
    }

    /// Reads each connection until the server closes it or `deadline` passes, all on one
    /// thread (one hop back to the test, however many connections).
    ///
    /// - Parameters:
    ///   - connections: The connections, read in order.
    ///   - deadline: When to stop waiting for any of them.
    /// - Returns: What came on each, and whether the server closed it.
    static func readUntilClosed(
        _ connections: [RawConnection], deadline: ContinuousClock.Instant
    ) async -> [(bytes: [UInt8], closed: Bool)] {
        await OffPool.run {
            connections.map { $0.readBlocking(timeout: max(.milliseconds(1), deadline - ContinuousClock.now)) }
        }
    }

    private func readBlocking(timeout: Duration) -> (bytes: [UInt8], closed: Bool) {
        readBlocking(until: ContinuousClock.now + max(timeout, .milliseconds(1)))
    }

    private func readBlocking(until deadline: ContinuousClock.Instant) -> (bytes: [UInt8], closed: Bool) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while ContinuousClock.now < deadline {
            let left = deadline - ContinuousClock.now
            var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(
                max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
            guard poll(&poller, 1, milliseconds) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return (received, true) }
            received += buffer[0..<count]
        }
        return (received, false)
    }

    /// The status of the first response in `bytes`, if any.
    static func status(_ bytes: [UInt8]) -> Int? {
        let text = String(decoding: bytes.prefix(64), as: UTF8.self)
        guard text.hasPrefix("HTTP/1."), text.count >= 12 else { return nil }
        return Int(text.dropFirst(9).prefix(3))
    }
}

/// One request on its own connection (`Connection: close`): the status and the whole answer.
enum RawHTTP {
    static func exchange(port: Int, _ request: String, timeout: Duration = .seconds(30)) async throws -> (
        status: Int?, text: String
    ) {
        let connection = try RawConnection(port: port)
        await connection.send(request)
        let (bytes, _) = await connection.readUntilClosed(timeout: timeout)
        return (RawConnection.status(bytes), String(decoding: bytes, as: UTF8.self))
    }

    /// A GET of `path` exactly as written, with `headers` (Host given unless `headers` has one).
    static func get(port: Int, _ path: String, headers: [String: String] = [:]) async throws -> (
        status: Int?, text: String
    ) {
        var lines = ["GET \(path) HTTP/1.1"]
        if headers["Host"] == nil { lines.append("Host: 127.0.0.1:\(port)") }
        lines += headers.map { "\($0.key): \($0.value)" }
        lines.append("Connection: close")
        return try await exchange(port: port, lines.joined(separator: "\r\n") + "\r\n\r\n")
    }
}

struct RawHTTPError: Error {
    var message: String
}

/// Blocking work on a thread of its own, awaited: Swift's concurrency runs on as many threads
/// as there are cores (2 in CI), and a test blocking them starves a server in the same process.
enum OffPool {
    static func run<Value: Sendable>(_ work: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: work()) }
        }
    }

    static func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
        }
    }
}
