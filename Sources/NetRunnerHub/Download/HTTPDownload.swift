import AsyncHTTPClient
import FoundationEssentials
import NIOCore
import NIOHTTP1
import NetRunnerSupport

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
    ///   - progress: Called with the bytes received so far and the total, if known.
    /// - Returns: The digest, size and the server's content type.
    /// - Throws: ``ImportError/downloadFailed(source:reason:)``, ``ImportError/tooLarge(source:limit:)``,
    ///   ``ImportError/badSource(source:reason:)`` for a host that is not allowed. Every URL in
    ///   them has its user and password masked.
    package static func download(
        _ url: String, to path: String, limit: Int, addresses: AddressCheck, progress: @Sendable (Int, Int?) -> Void
    ) async throws(ImportError) -> Outcome {
        let shown = URLCredentials.masked(url)
        // Removed unless finished: a failed download leaves nothing.
        let writer: HashingFileWriter
        do {
            writer = try HashingFileWriter(creating: path)
        } catch {
            throw .installFailed(path: path, reason: error.reason)
        }
        var received = 0
        var contentType: String?
        var client: HTTPClient?
        do {
            // The deadline bounds the whole request; the read timeout catches a stall sooner.
            let deadline = NIODeadline.now() + .hours(6)
            var current = url
            var visited: Set<String> = [url]
            var response: HTTPClientResponse
            while true {
                let target = try await addresses.target(for: current, source: shown, redirected: current != url)
                let hop = makeClient(dnsOverride: target.dnsOverride)
                client = hop
                response = try await hop.execute(HTTPClientRequest(url: current), deadline: deadline)
                guard [301, 302, 303, 307, 308].contains(response.status.code),
                    let location = response.headers.first(name: "location")
                else { break }
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
                // The redirect's own body is read and dropped (a small one; a large one is cut).
                var discarded = 0
                for try await buffer in response.body {
                    discarded += buffer.readableBytes
                    if discarded > 1 << 20 { break }
                }
                client = nil
                try? await hop.shutdown()
                current = next
            }
            guard response.status.code == 200 else {
                throw ImportError.downloadFailed(
                    source: shown,
                    reason: "the server answered \(response.status.code) \(response.status.reasonPhrase)")
            }
            let total = response.headers.first(name: "content-length").flatMap { Int($0) }
            if let total, total > limit { throw ImportError.tooLarge(source: shown, limit: limit) }
            contentType = response.headers.first(name: "content-type")
            progress(0, total)
            for try await buffer in response.body {
                received += buffer.readableBytes
                guard received <= limit else { throw ImportError.tooLarge(source: shown, limit: limit) }
                do {
                    try buffer.withUnsafeReadableBytes { try writer.write($0) }
                } catch {
                    throw ImportError.installFailed(path: path, reason: (error as? FileError)?.reason ?? "\(error)")
                }
                progress(received, total)
            }
            if let total, received != total {
                throw ImportError.downloadFailed(
                    source: shown, reason: "the connection closed after \(received) of \(total) bytes")
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
        return Outcome(
            sha256: sha256, byteCount: received, contentType: contentType,
            suggestedName: suggestedName(for: url))
    }

    /// A client for one request: redirects not followed (``download(_:to:limit:addresses:progress:)``
    /// checks each target first), connecting to the checked address of the host.
    private static func makeClient(dnsOverride: [String: String]) -> HTTPClient {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(10), read: .seconds(30)),
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
