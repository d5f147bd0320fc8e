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

/// Brings one published file into the cache, whatever happens on the way.
///
/// - Several processes asking for the same file at once: one downloads (it holds
///   `partial/<hex>.lock`, touching it every second), the others wait and then use its result.
///   A lock untouched for 30 s, or whose process is gone, is stale and taken over.
/// - A dropped connection, or a process killed mid-download: the partial file stays, and the
///   next attempt (in this process, with backoff, or a later one) asks for the rest with
///   `Range: bytes=N-` and `If-Range: "sha256:<hex>"`, so a changed file restarts from 0.
/// - Bytes damaged on the way: the whole file is hashed before anything is installed; a
///   mismatch deletes the partial file and fails (``HubClientError/verificationFailed(name:expected:found:)``).
/// - Installing is one `rename(2)` into `blobs/`: a reader sees no file or the whole, verified one.
/// - A hostile hub: its digest is a validated ``SHA256Digest`` before it names a file; a size
///   over ``HubClient/maximumDownloadBytes`` is refused before a byte is asked for; a body
///   longer than the size published is cut off there and its partial file removed (not
///   retried); the key goes only to the hub's own origin.
struct HubFetcher: Sendable {
    let client: HubClient
    let cache: HubCache
    /// Bytes per second at most (a download condition), if set.
    var maximumBytesPerSecond: Int?
    /// Attempts after the first for a broken transfer.
    var retries = 4

    func fetch(
        _ resolution: HubResolution, progress: @Sendable (_ received: Int, _ total: Int) -> Void
    ) async throws(HubClientError) -> HubCache.Entry {
        if let entry = cache.blob(sha256: resolution.sha256) { return entry }
        try client.check(resolution, name: resolution.name)
        guard resolution.size <= client.maximumDownloadBytes else {
            throw .tooLarge(
                hub: client.address, name: "\(resolution.name)@\(resolution.version)", size: resolution.size,
                limit: client.maximumDownloadBytes)
        }
        let partialFolder = cache.folder + "/partial"
        let blobFolder = cache.folder + "/blobs/sha256"
        do {
            try FileManager.default.createDirectory(atPath: partialFolder, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: blobFolder, withIntermediateDirectories: true)
        } catch {
            throw .file(error, path: cache.folder)
        }
        let lock = FileLock(path: partialFolder + "/\(resolution.sha256.hex).lock")
        try await lock.acquire()
        defer { lock.release() }
        // Someone else may have finished it while we waited.
        if let entry = cache.blob(sha256: resolution.sha256) { return entry }
        let partial = partialFolder + "/\(resolution.sha256.hex).part"
        var attempt = 0
        var found = ""
        while true {
            do {
                found = try await transfer(resolution, into: partial, lock: lock, progress: progress)
                break
            } catch let error as HubClientError {
                // A broken transfer is resumed; a hub that answers wrongly is not asked again.
                guard case .unreachable = error, attempt < retries else { throw error }
                attempt += 1
                try? await Task.sleep(for: .milliseconds(250 << attempt))
            } catch let restart as Restart {
                guard attempt < retries else { throw restart.error }
                attempt += 1
            } catch {
                throw .file(error, path: partial)
            }
        }
        // The whole file's digest (the part kept from an earlier attempt hashed from disk, the
        // rest as it arrived), then one rename installs it.
        guard found == resolution.sha256.hex else {
            unlink(partial)
            throw .verificationFailed(
                name: "\(resolution.name)@\(resolution.version)", expected: resolution.sha256.hex, found: found)
        }
        let target = cache.blobPath(sha256: resolution.sha256, format: resolution.format)
        guard rename(partial, target) == 0 else {
            throw .storage(path: target, reason: String(cString: strerror(errno)))
        }
        return HubCache.Entry(path: target, sha256: resolution.sha256, size: resolution.size)
    }

    /// One attempt: asks for what the partial file lacks and appends it.
    ///
    /// - Returns: The SHA-256 of the whole file.
    private func transfer(
        _ resolution: HubResolution, into partial: String, lock: FileLock,
        progress: @Sendable (_ received: Int, _ total: Int) -> Void
    ) async throws -> String {
        var have = 0
        var status = stat()
        if stat(partial, &status) == 0 { have = Int(status.st_size) }
        if have > resolution.size {
            unlink(partial)
            have = 0
        }
        if have == resolution.size, have > 0 { return try SHA256.hexDigest(ofFileAt: partial).digest }
        // The key goes only to the hub's own origin (async-http-client drops it on a redirect
        // to another origin).
        let (url, sameOrigin) = try client.download(resolution.download)
        var request = HTTPClientRequest(url: url)
        if sameOrigin, let token = client.token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        let etag = "\"sha256:\(resolution.sha256.hex)\""
        if have > 0 {
            request.headers.add(name: "Range", value: "bytes=\(have)-")
            request.headers.add(name: "If-Range", value: etag)
        }
        let response: HTTPClientResponse
        do {
            response = try await HTTPDownload.client.execute(request, timeout: .hours(6))
        } catch {
            throw HubClientError.unreachable(hub: client.address, reason: HTTPDownload.reason(for: error))
        }
        let code = Int(response.status.code)
        switch code {
        case 206:
            break
        case 200:
            have = 0  // the whole file: start again
        case 416:
            unlink(partial)
            throw Restart(
                error: .badResponse(hub: client.address, reason: "the partial download no longer fits (416)"))
        default:
            let body = try? await response.body.collect(upTo: 1 << 16)
            let text = body.map { String(decoding: $0.readableBytesView, as: UTF8.self) } ?? ""
            throw HubClientError.refused(hub: client.address, status: code, message: text)
        }
        // More than the size published is refused before a byte is written.
        let longer = HubClientError.badResponse(
            hub: client.address,
            reason:
                "it sent more than the \(resolution.size) bytes published for \(resolution.name)@\(resolution.version); "
                + "the partial file was removed")
        if let text = response.headers.first(name: "content-length") {
            let length = try? CheckedNumber.integer(text, "Content-Length", in: 0...Int.max)
            guard let length, length <= resolution.size - have else {
                unlink(partial)
                throw longer
            }
        }
        // The digest runs over the kept part (read back once) and then every piece as it comes.
        let writer: HashingFileWriter
        do {
            writer = try HashingFileWriter(resuming: partial, keeping: have)
        } catch {
            throw HubClientError.storage(path: partial, reason: error.reason)
        }
        // Kept for the next attempt to resume, unless found longer than published.
        var keepsPartial = true
        defer { if keepsPartial { writer.keepPartial() } }
        var received = have
        let started = ContinuousClock.now
        var lastBeat = started
        progress(received, resolution.size)
        do {
            for try await buffer in response.body {
                guard buffer.readableBytes <= resolution.size - received else {
                    keepsPartial = false
                    throw longer
                }
                do {
                    try buffer.withUnsafeReadableBytes { try writer.write($0) }
                } catch {
                    throw HubClientError.storage(path: partial, reason: (error as? FileError)?.reason ?? "\(error)")
                }
                received += buffer.readableBytes
                progress(received, resolution.size)
                let now = ContinuousClock.now
                if now - lastBeat > .seconds(1) {
                    lock.touch()
                    lastBeat = now
                }
                if let limit = maximumBytesPerSecond, limit > 0 {
                    // Sleep until the average rate is back under the cap.
                    let due = Duration.seconds(Double(received - have) / Double(limit))
                    let elapsed = now - started
                    if due > elapsed { try? await Task.sleep(for: due - elapsed) }
                }
            }
        } catch let error as HubClientError {
            throw error
        } catch {
            throw HubClientError.unreachable(hub: client.address, reason: HTTPDownload.reason(for: error))
        }
        guard received == resolution.size else {
            throw HubClientError.unreachable(
                hub: client.address, reason: "the connection closed after \(received) of \(resolution.size) bytes")
        }
        keepsPartial = false
        do {
            return try writer.finish()
        } catch {
            throw HubClientError.storage(path: partial, reason: error.reason)
        }
    }
}

/// A transfer to start again at once (the hub no longer has the range asked for).
private struct Restart: Error {
    let error: HubClientError
}

/// A lock file shared by processes: made with `O_EXCL`, holding the holder's pid, touched while
/// held; stale when untouched for 30 s or its process is gone.
final class FileLock: Sendable {
    let path: String

    init(path: String) { self.path = path }

    func acquire() async throws(HubClientError) {
        while true {
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            if descriptor >= 0 {
                let text = "\(getpid())\n"
                _ = text.withCString { write(descriptor, $0, strlen($0)) }
                close(descriptor)
                return
            }
            guard errno == EEXIST else {
                throw .storage(path: path, reason: String(cString: strerror(errno)))
            }
            if isStale() {
                unlink(path)
                continue
            }
            try? await Task.sleep(for: .milliseconds(200))
        }
    }

    func touch() { utime(path, nil) }

    func release() { unlink(path) }

    private func isStale() -> Bool {
        var status = stat()
        guard stat(path, &status) == 0 else { return false }
        if time(nil) - status.st_mtim.tv_sec > 30 { return true }
        guard let data = try? FileIO.contents(of: path, maximumSize: 64),
            let pid = Int32(String(decoding: data, as: UTF8.self).filter(\.isNumber))
        else { return false }
        return kill(pid, 0) != 0 && errno == ESRCH
    }
}
