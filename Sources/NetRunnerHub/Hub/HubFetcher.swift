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
        _ resolution: HubResolution, progress: @escaping @Sendable (_ received: Int, _ total: Int) -> Void
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
        progress: @escaping @Sendable (_ received: Int, _ total: Int) -> Void
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
        var request: HTTPClient.Request
        do {
            request = try HTTPClient.Request(url: url)
        } catch {
            throw HubClientError.unreachable(hub: client.address, reason: HTTPDownload.reason(for: error))
        }
        if sameOrigin, let token = client.token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if have > 0 {
            request.headers.add(name: "Range", value: "bytes=\(have)-")
            request.headers.add(name: "If-Range", value: "\"sha256:\(resolution.sha256.hex)\"")
        }
        let sink = TransferSink(
            resolution: resolution, hub: client.address, partial: partial, have: have, lock: lock,
            maximumBytesPerSecond: maximumBytesPerSecond, progress: progress)
        defer { sink.settle() }
        do {
            try await EventLoopBody.read(
                request, with: HTTPDownload.client, deadline: .now() + .hours(6), into: sink)
        } catch let error as HubClientError {
            throw error
        } catch let restart as Restart {
            throw restart
        } catch {
            throw HubClientError.unreachable(hub: client.address, reason: HTTPDownload.reason(for: error))
        }
        return try sink.finish()
    }
}

/// One transfer's response, taken on the client's event loop as it arrives (see
/// ``EventLoopBody``): the head decides where the bytes go, each piece is checked against the
/// size published, appended, hashed, and paced by the rate limit.
private final class TransferSink: ResponseConsumer {
    private struct State {
        var received = 0
        var started = ContinuousClock.now
        var lastBeat = ContinuousClock.now
        /// Kept for the next attempt to resume, unless found longer than published.
        var keepsPartial = true
        /// A refusal's status and the start of its body, read to say why.
        var refusal: (status: Int, text: String)?
    }

    private let resolution: HubResolution
    private let hub: String
    private let partial: String
    private let lock: FileLock
    private let maximumBytesPerSecond: Int?
    private let progress: @Sendable (_ received: Int, _ total: Int) -> Void
    private let state: Mutex<State>
    private let have: Int
    // Set by the head and used for each piece after it, all on the event loop one after
    // another, then by finish() once the request has ended.
    nonisolated(unsafe) private var writer: HashingFileWriter?

    init(
        resolution: HubResolution, hub: String, partial: String, have: Int, lock: FileLock,
        maximumBytesPerSecond: Int?, progress: @escaping @Sendable (_ received: Int, _ total: Int) -> Void
    ) {
        self.resolution = resolution
        self.hub = hub
        self.partial = partial
        self.have = have
        self.lock = lock
        self.maximumBytesPerSecond = maximumBytesPerSecond
        self.progress = progress
        state = Mutex(State())
    }

    /// More than the size published: refused before a byte is written, cut off where it passes.
    private var longer: HubClientError {
        .badResponse(
            hub: hub,
            reason:
                "it sent more than the \(resolution.size) bytes published for \(resolution.name)@\(resolution.version); "
                + "the partial file was removed")
    }

    func receive(head: HTTPResponseHead) throws {
        var kept = have
        switch Int(head.status.code) {
        case 206:
            break
        case 200:
            kept = 0  // the whole file: start again
        case 416:
            unlink(partial)
            throw Restart(error: .badResponse(hub: hub, reason: "the partial download no longer fits (416)"))
        default:
            state.withLock { $0.refusal = (Int(head.status.code), "") }
            return
        }
        if let text = head.headers.first(name: "content-length") {
            let length = try? CheckedNumber.integer(text, "Content-Length", in: 0...Int.max)
            guard let length, length <= resolution.size - kept else {
                unlink(partial)
                throw longer
            }
        }
        // The digest runs over the kept part (read back once) and then every piece as it comes.
        let writer: HashingFileWriter
        do {
            writer = try HashingFileWriter(resuming: partial, keeping: kept)
        } catch {
            throw HubClientError.storage(path: partial, reason: error.reason)
        }
        self.writer = writer
        state.withLock {
            $0.received = kept
            $0.started = .now
            $0.lastBeat = .now
        }
        progress(kept, resolution.size)
    }

    func receive(body buffer: ByteBuffer) throws -> Duration {
        let size = resolution.size
        let (received, pause) = try state.withLock { state throws -> (Int, Duration) in
            if var refusal = state.refusal {
                if refusal.text.utf8.count < 1 << 16 {
                    refusal.text += String(decoding: buffer.readableBytesView, as: UTF8.self)
                    state.refusal = refusal
                }
                return (state.received, .zero)
            }
            guard let writer else { return (state.received, .zero) }
            guard buffer.readableBytes <= size - state.received else {
                state.keepsPartial = false
                throw longer
            }
            do {
                try buffer.withUnsafeReadableBytes { try writer.write($0) }
            } catch {
                throw HubClientError.storage(path: partial, reason: (error as? FileError)?.reason ?? "\(error)")
            }
            state.received += buffer.readableBytes
            let now = ContinuousClock.now
            if now - state.lastBeat > .seconds(1) {
                lock.touch()
                state.lastBeat = now
            }
            // Wait until the average rate is back under the cap.
            var pause = Duration.zero
            if let limit = maximumBytesPerSecond, limit > 0 {
                let due = Duration.seconds(Double(state.received - have) / Double(limit))
                let elapsed = now - state.started
                if due > elapsed { pause = due - elapsed }
            }
            return (state.received, pause)
        }
        if state.withLock({ $0.refusal == nil }) { progress(received, size) }
        return pause
    }

    /// After the response: the refusal it was, or the whole file's digest.
    ///
    /// - Returns: The SHA-256 of the whole file.
    /// - Throws: ``HubClientError/refused(hub:status:message:)`` for a status the transfer does
    ///   not take; ``HubClientError/unreachable(hub:reason:)`` when the body ended short.
    func finish() throws(HubClientError) -> String {
        try state.withLock { state throws(HubClientError) -> String in
            if let refusal = state.refusal {
                throw .refused(hub: hub, status: refusal.status, message: refusal.text)
            }
            guard let writer else {
                throw .unreachable(hub: hub, reason: "the hub sent no answer")
            }
            guard state.received == resolution.size else {
                throw .unreachable(
                    hub: hub, reason: "the connection closed after \(state.received) of \(resolution.size) bytes")
            }
            state.keepsPartial = false
            do {
                return try writer.finish()
            } catch {
                throw .storage(path: partial, reason: (error as? FileError)?.reason ?? "\(error)")
            }
        }
    }

    /// Closes the partial file once the request has ended, however it ended.
    ///
    /// It is kept for the next attempt to resume, or removed when the hub sent more than it
    /// published. Called by the
    /// transfer, not left to `deinit` (the client may hold this object past the process's exit).
    func settle() {
        guard let writer else { return }
        if state.withLock({ $0.keepsPartial }) { writer.keepPartial() }
        self.writer = nil  // the last reference: an unkept file is removed here
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
