import AsyncHTTPClient
import FoundationEssentials
import NIOCore
import NIOHTTP1
import NetRunnerSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Downloads over HTTP(S) into a file, streamed: the body goes to disk in the pieces it arrives
/// in, hashed on the way, never held in memory whole.
///
/// One HTTP client for the process (async-http-client), with timeouts a stalled server cannot
/// outwait: 10 s to connect, 30 s without a byte; a refused connection fails at once. Redirects are followed (at most 5, no
/// cycles; an import's download checks each target's address first, see ``AddressCheck``);
/// compressed transfer encodings are not asked for, so a download cannot expand.
package enum HTTPDownload {
    /// The process's client; never shut down (it lives as long as the process).
    static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .follow(max: 5, allowCycles: false),
            timeout: .init(connect: .seconds(10), read: .seconds(30)),
            decompression: .disabled)
        // A refused connection fails at once (the client would retry until the connect
        // timeout); the hub client retries transfers itself, with backoff.
        configuration.connectionPool.retryConnectionEstablishment = false
        // An idle pooled connection is closed well before a server would close it (hub serve and
        // serve: --idle-timeout, 60 s by default, as the client's own default): a request sent on
        // a connection the server is closing at that moment fails with "closed the connection".
        configuration.connectionPool.idleTimeout = .seconds(5)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    /// A client of its own for one request that must not go out on a pooled connection.
    ///
    /// An upload is not repeatable if the connection turns out to be closing; the caller shuts
    /// it down afterwards. It waits 5 minutes for a byte, not 30 s: a hub answers an upload only
    /// once a child process has run the model, which took over 30 s on a loaded machine (a CI
    /// run's push failed so, its version published all the same).
    static func unpooledClient() -> HTTPClient {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .follow(max: 5, allowCycles: false),
            timeout: .init(connect: .seconds(10), read: .seconds(300)), decompression: .disabled)
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// What a finished download gave.
    package struct Outcome: Sendable {
        /// The SHA-256 of the bytes written.
        package var sha256: String
        /// The bytes written.
        package var byteCount: Int
        /// The server's `Content-Type`, if any.
        package var contentType: String?
        /// The last path component of the URL, percent-decoding left alone.
        package var suggestedName: String
    }

    /// Whether a source names an http or https URL.
    package static func isHTTP(_ source: String) -> Bool {
        let lowered = source.lowercased()
        return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
    }

    /// Downloads `url` into a new file at `path`.
    ///
    /// Redirects are followed here (at most 5, no cycles, http and https only), each target's
    /// host checked by `addresses` before it is connected to.
    ///
    /// - Parameters:
    ///   - url: An http or https URL.
    ///   - path: The file to create (it must not exist); removed again on failure.
    ///   - limit: The most bytes accepted: a larger `Content-Length` is refused before the body
    ///     is read, a body that grows past it is cut off.
    ///   - addresses: Which hosts may be connected to (``AddressCheck``).
    ///   - progress: Called with the bytes received so far and the total, if known (on the
    ///     client's event loop).
    ///   - readTimeout: How long the server may send nothing (30 s; the tests shorten it).
    /// - Returns: The digest, size and the server's content type.
    /// - Throws: ``ImportError/downloadFailed(source:reason:)``, ``ImportError/tooLarge(source:limit:)``,
    ///   ``ImportError/badSource(source:reason:)`` for a host that is not allowed. Every URL in
    ///   them has its user and password masked.
    package static func download(
        _ url: String, to path: String, limit: Int, addresses: AddressCheck,
        progress: @escaping @Sendable (Int, Int?) -> Void, readTimeout: Duration = .seconds(30)
    ) async throws(ImportError) -> Outcome {
        let shown = URLCredentials.masked(url)
        // Removed unless finished: a failed download leaves nothing.
        let writer: HashingFileWriter
        do {
            writer = try HashingFileWriter(creating: path)
        } catch {
            throw .installFailed(path: path, reason: error.reason)
        }
        let sink = FileSink(writer: writer, source: shown, path: path, limit: limit, progress: progress)
        defer { sink.release() }
        var client: HTTPClient?
        do {
            // The deadline bounds the whole request; the read timeout catches a stall sooner.
            let deadline = NIODeadline.now() + .hours(6)
            var current = url
            var visited: Set<String> = [url]
            while true {
                let target = try await addresses.target(for: current, source: shown, redirected: current != url)
                let hop = makeClient(
                    dnsOverride: target.dnsOverride,
                    readTimeout: .nanoseconds(
                        readTimeout.components.seconds * 1_000_000_000 + readTimeout.components.attoseconds
                            / 1_000_000_000))
                client = hop
                let location = try await sink.fetch(current, with: hop, deadline: deadline)
                guard let location else { break }
                guard let next = URL(string: location, relativeTo: URL(string: current))?.absoluteString,
                    isHTTP(next)
                else {
                    throw ImportError.downloadFailed(
                        source: shown,
                        reason: "it redirects to \(URLCredentials.masked(location)), not an http(s) URL")
                }
                guard visited.insert(next).inserted else {
                    throw ImportError.downloadFailed(source: shown, reason: "it redirects in a circle")
                }
                guard visited.count <= 6 else {
                    throw ImportError.downloadFailed(source: shown, reason: "it redirected more than 5 times")
                }
                client = nil
                try? await hop.shutdown()
                current = next
            }
            if let client { try? await client.shutdown() }
        } catch {
            if let client { try? await client.shutdown() }
            if let error = error as? ImportError { throw error }
            throw .downloadFailed(source: shown, reason: URLCredentials.masked(reason(for: error)))
        }
        let sha256: String
        do {
            sha256 = try writer.finish()
        } catch {
            throw .installFailed(path: path, reason: error.reason)
        }
        let (received, contentType) = sink.result
        return Outcome(
            sha256: sha256, byteCount: received, contentType: contentType,
            suggestedName: suggestedName(for: url))
    }

    /// A client for one request: redirects not followed (``download(_:to:limit:addresses:progress:readTimeout:)``
    /// checks each target first), connecting to the checked address of the host.
    private static func makeClient(dnsOverride: [String: String], readTimeout: TimeAmount) -> HTTPClient {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(10), read: readTimeout),
            decompression: .disabled)
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.dnsOverride = dnsOverride
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// The file name a URL suggests: its path's last component, without query or fragment.
    package static func suggestedName(for url: String) -> String {
        var text = Substring(url)
        if let end = text.firstIndex(where: { $0 == "?" || $0 == "#" }) { text = text[..<end] }
        if let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") {
            text = text[text.index(colon, offsetBy: 3)...]
        }
        let parts = text.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count > 1, let last = parts.last else { return "model" }
        return String(last)
    }

    /// A person's reading of a client error.
    static func reason(for error: any Error) -> String {
        if let error = error as? HTTPClientError {
            let readings: [(HTTPClientError, String)] = [
                (.connectTimeout, "no connection within 10 seconds"),
                (.readTimeout, "the server sent nothing for 30 seconds (5 minutes for an upload's answer)"),
                (.deadlineExceeded, "it took longer than 6 hours"),
                (.invalidURL, "it is not a valid http(s) URL"),
                (.emptyHost, "it is not a valid http(s) URL (no host)"),
                (.emptyScheme, "it is not a valid http(s) URL"),
                (.redirectLimitReached, "it redirected more than 5 times"),
                (.redirectCycleDetected, "it redirects in a circle"),
                (.remoteConnectionClosed, "the server closed the connection"),
            ]
            return readings.first(where: { $0.0 == error })?.1 ?? "\(error)"
        }
        let text = "\(error)"
        if text.contains("connection refused") || text.contains("Connection refused") {
            return "the connection was refused (is the server running?)"
        }
        return text
    }
}

/// Where a download's body goes: written and hashed on the client's event loop as each piece
/// arrives (see ``EventLoopBody``).
private final class FileSink: ResponseConsumer {
    /// A redirect's `Location`: the hop ends there, its body unread.
    private struct Redirect: Error {
        let location: String
    }

    private struct State {
        var received = 0
        var total: Int?
        var contentType: String?
    }

    // Used only on the event loop, one piece after another; let go by release() (the client
    // may hold this object after the request has ended).
    nonisolated(unsafe) private var writer: HashingFileWriter?
    private let source: String
    private let path: String
    private let limit: Int
    private let progress: @Sendable (Int, Int?) -> Void
    private let state = Mutex(State())

    init(
        writer: HashingFileWriter, source: String, path: String, limit: Int,
        progress: @escaping @Sendable (Int, Int?) -> Void
    ) {
        self.writer = writer
        self.source = source
        self.path = path
        self.limit = limit
        self.progress = progress
    }

    /// Lets go of the file once the requests have ended: the caller's reference decides, alone,
    /// when a file not finished is removed.
    func release() { writer = nil }

    /// The bytes received and the server's `Content-Type`.
    var result: (received: Int, contentType: String?) { state.withLock { ($0.received, $0.contentType) } }

    /// Requests `url`: its body into the file, or its redirect's `Location` (nothing written).
    ///
    /// - Throws: ``ImportError`` for a status other than 200, a body over the limit or shorter
    ///   than its `Content-Length`, a write that failed; the client's errors as they are.
    func fetch(_ url: String, with client: HTTPClient, deadline: NIODeadline) async throws -> String? {
        do {
            try await EventLoopBody.read(try HTTPClient.Request(url: url), with: client, deadline: deadline, into: self)
        } catch let redirect as Redirect {
            return redirect.location
        }
        let (received, total) = state.withLock { ($0.received, $0.total) }
        if let total, received != total {
            throw ImportError.downloadFailed(
                source: source, reason: "the connection closed after \(received) of \(total) bytes")
        }
        return nil
    }

    func receive(head: HTTPResponseHead) throws {
        if [301, 302, 303, 307, 308].contains(head.status.code), let location = head.headers.first(name: "location") {
            throw Redirect(location: location)
        }
        guard head.status.code == 200 else {
            throw ImportError.downloadFailed(
                source: source, reason: "the server answered \(head.status.code) \(head.status.reasonPhrase)")
        }
        let total = head.headers.first(name: "content-length").flatMap { Int($0) }
        if let total, total > limit { throw ImportError.tooLarge(source: source, limit: limit) }
        state.withLock {
            $0.total = total
            $0.contentType = head.headers.first(name: "content-type")
        }
        progress(0, total)
    }

    func receive(body buffer: ByteBuffer) throws -> Duration {
        let (received, total) = state.withLock {
            $0.received += buffer.readableBytes
            return ($0.received, $0.total)
        }
        guard received <= limit else { throw ImportError.tooLarge(source: source, limit: limit) }
        do {
            try buffer.withUnsafeReadableBytes { try writer?.write($0) }
        } catch {
            throw ImportError.installFailed(path: path, reason: (error as? FileError)?.reason ?? "\(error)")
        }
        progress(received, total)
        return .zero
    }
}
