import FoundationEssentials
import NetRunnerSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// ML Kit's model downloader for a NetRunner hub: a model by name, under conditions, from the
/// verified cache or the hub.
///
///     let downloader = ModelDownloader.modelDownloader()
///     let model = try await downloader.getModel(
///         name: "flowers@production", downloadType: .latestModel, conditions: ModelDownloadConditions())
///     let classifier = try ImageClassifier(model: LoadedModel(.path(model.path)))
///
/// Every download is resumable (across process restarts), verified by SHA-256 before it is
/// installed, and shared by processes asking at once (``HubCache``). ``events`` streams what
/// happens (``ModelDownloadEvent``).
public final class ModelDownloader: Sendable {
    /// The hub asked.
    public let hub: HubClient
    /// The local copies.
    public let cache: HubCache
    /// The client id it resolves aliases with, if given (else the machine's, made once and kept
    /// in the cache): a weighted alias or an experiment gives each id the same version.
    public let client: String?
    private let listeners = Mutex<[Int: AsyncStream<ModelDownloadEvent>.Continuation]>([:])
    private let nextListener = Atomic<Int>(0)

    /// A downloader for a hub and a cache.
    ///
    /// - Parameters:
    ///   - hub: The hub (default: `NETRUNNER_HUB`, `NETRUNNER_HUB_TOKEN`).
    ///   - cache: The cache (default: the user's).
    ///   - client: The client id to resolve aliases with (default: the machine's; an app's
    ///     user id keeps a user on one variant across devices).
    public init(hub: HubClient = HubClient(), cache: HubCache = HubCache(), client: String? = nil) {
        self.hub = hub
        self.cache = cache
        self.client = client
    }

    /// ML Kit's spelling: a downloader for the default hub and cache.
    public static func modelDownloader(hub: HubClient = HubClient(), cache: HubCache = HubCache()) -> ModelDownloader {
        ModelDownloader(hub: hub, cache: cache)
    }

    /// What happens from now on: one stream per caller.
    public var events: AsyncStream<ModelDownloadEvent> {
        let (stream, continuation) = AsyncStream<ModelDownloadEvent>.makeStream(bufferingPolicy: .bufferingNewest(256))
        let id = nextListener.add(1, ordering: .relaxed).newValue
        listeners.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in self?.listeners.withLock { _ = $0.removeValue(forKey: id) } }
        return stream
    }

    func emit(_ event: ModelDownloadEvent) {
        for continuation in listeners.withLock({ Array($0.values) }) { continuation.yield(event) }
    }

    /// The model, as the download type says.
    ///
    /// - Parameters:
    ///   - name: `flowers`, `flowers@7`, `flowers@production` or `flowers@sha256:<hex>`.
    ///   - downloadType: Local copy, local now and update in the background, or latest.
    ///   - conditions: When a download may start.
    /// - Returns: The verified local model.
    /// - Throws: ``HubClientError``.
    public func getModel(
        name: String, downloadType: ModelDownloadType = .latestModel,
        conditions: ModelDownloadConditions = ModelDownloadConditions()
    ) async throws(HubClientError) -> CustomModel {
        let remote = CustomRemoteModel(name: name)
        let local = localModel(remote)
        switch downloadType {
        case .localModel:
            if let local { return local }
        case .localModelUpdateInBackground:
            if let local {
                Task.detached { [self] in _ = try? await latest(remote, local: local, conditions: conditions) }
                return local
            }
        case .latestModel:
            break
        }
        return try await latest(remote, local: local, conditions: conditions)
    }

    /// The verified local copy of what a reference last resolved to, if any.
    func localModel(_ remote: CustomRemoteModel) -> CustomModel? {
        guard let last = cache.lastResolution(hub: hub.address, name: remote.name, reference: remote.reference),
            let entry = cache.blob(sha256: last.sha256)
        else { return nil }
        return CustomModel(
            name: remote.name, version: last.version, size: entry.size, path: entry.path, hash: entry.sha256.hex)
    }

    /// Asks the hub; downloads if it changed; falls back to the local copy when the hub cannot
    /// be reached or the conditions do not hold.
    func latest(_ remote: CustomRemoteModel, local: CustomModel?, conditions: ModelDownloadConditions)
        async throws(HubClientError) -> CustomModel
    {
        let label = "\(remote.name)@\(remote.reference)"
        let resolution: HubResolution
        do throws(HubClientError) {
            let clientID = client ?? ModelDownloader.clientID(cache: cache)
            switch try await hub.checkForUpdate(
                remote.name, reference: remote.reference, client: clientID, current: local?.hash)
            {
            case .changed(let found):
                resolution = found
            case .unchanged(let named):
                // 304: the local copy's bytes are current, but versions with the same bytes share
                // them: the version is the one the hub names now, else the one asked for, else
                // the hub is asked again in full.
                guard let local else {
                    throw HubClientError.badResponse(hub: hub.address, reason: "304 without a local copy")
                }
                if let version = named ?? Self.versionNumber(remote.reference) {
                    return try current(local, version: version, remote: remote)
                }
                guard
                    let found = try await hub.resolve(remote.name, reference: remote.reference, client: clientID)
                else {
                    throw HubClientError.badResponse(hub: hub.address, reason: "304 without If-None-Match")
                }
                resolution = found
            }
        } catch {
            if case .unreachable(_, let reason) = error, let local {
                return local.asFallback("the hub at \(hub.address) cannot be reached (\(reason))")
            }
            emit(.didFail(name: label, reason: "\(error)"))
            if case .unreachable(_, let reason) = error {
                throw .notDownloaded(name: label, reason: "the hub at \(hub.address) cannot be reached (\(reason))")
            }
            throw error
        }
        if let entry = cache.blob(sha256: resolution.sha256) {
            try cache.record(resolution, hub: hub.address)
            return CustomModel(
                name: remote.name, version: resolution.version, size: entry.size, path: entry.path,
                hash: entry.sha256.hex)
        }
        if let reason = conditions.unmetReason() {
            if let local { return local.asFallback("not downloading now: \(reason)") }
            emit(.didFail(name: label, reason: reason))
            throw .conditionsNotMet(reason: reason)
        }
        emit(.started(name: label, version: resolution.version, totalBytes: resolution.size))
        var fetcher = HubFetcher(client: hub, cache: cache)
        fetcher.maximumBytesPerSecond = conditions.maximumBytesPerSecond
        let entry: HubCache.Entry
        do {
            let lastReported = Mutex<Int>(-1)
            entry = try await fetcher.fetch(resolution) { [self] received, total in
                // At most ~100 progress events per download.
                let step = max(1, total / 100)
                let due = lastReported.withLock { last in
                    guard received == total || received - last >= step else { return false }
                    last = received
                    return true
                }
                if due { emit(.progress(name: label, receivedBytes: received, totalBytes: total)) }
            }
        } catch {
            emit(.didFail(name: label, reason: "\(error)"))
            if case .unreachable(_, let reason) = error, let local {
                return local.asFallback("the download from the hub at \(hub.address) failed (\(reason))")
            }
            throw error
        }
        emit(.verifying(name: label))
        try cache.record(resolution, hub: hub.address)
        let model = CustomModel(
            name: remote.name, version: resolution.version, size: entry.size, path: entry.path, hash: entry.sha256.hex)
        emit(.didSucceed(model))
        return model
    }

    /// The reference as a version number (`flowers@7`), or `nil` for an alias, `latest` or a digest.
    static func versionNumber(_ reference: String) -> Int? {
        guard !reference.isEmpty, reference.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return try? CheckedNumber.integer(reference, "version", in: 1...HubClient.maximumVersion)
    }

    /// The local copy, still current (304), as `version`: the reference's record says so too
    /// when the version differs (another version of the same bytes was published).
    private func current(_ local: CustomModel, version: Int, remote: CustomRemoteModel) throws(HubClientError)
        -> CustomModel
    {
        guard version != local.version else { return local }
        if var recorded = cache.lastResolution(hub: hub.address, name: remote.name, reference: remote.reference) {
            recorded.version = version
            try cache.record(recorded, hub: hub.address)
        }
        var model = local
        model.version = version
        return model
    }

    /// The models downloaded from this downloader's hub (ML Kit's `listDownloadedModels`): one
    /// per model and file, as the newest version recorded with those bytes (versions with the
    /// same bytes share the file).
    public func listDownloadedModels() -> [CustomModel] {
        let hubKey = HubCache.hubKey(hub.address)
        var models: [CustomModel] = []
        var positions: [String: Int] = [:]
        for (hubName, resolution, entry) in cache.references() where hubName == hubKey {
            guard let entry else { continue }
            let model = CustomModel(
                name: resolution.name, version: resolution.version, size: entry.size, path: entry.path,
                hash: entry.sha256.hex)
            let key = "\(resolution.name)\u{0}\(entry.sha256)"
            if let position = positions[key] {
                if model.version > models[position].version { models[position] = model }
            } else {
                positions[key] = models.count
                models.append(model)
            }
        }
        return models
    }

    /// Deletes a downloaded model's local copies (ML Kit's `deleteDownloadedModel`).
    public func deleteDownloadedModel(_ model: CustomModel) {
        cache.delete(name: model.name)
    }

    /// This machine's client id for staged rollouts: made once, kept in the cache.
    static func clientID(cache: HubCache) -> String {
        let path = cache.folder + "/client-id"
        if let data = try? FileIO.contents(of: path, maximumSize: 256) {
            let text = String(decoding: data, as: UTF8.self).filter { !$0.isWhitespace }
            if !text.isEmpty { return text }
        }
        let id = SHA256.hex((0..<16).map { _ in UInt8.random(in: 0...255) })
        try? FileManager.default.createDirectory(atPath: cache.folder, withIntermediateDirectories: true)
        try? FileIO.writeAtomically(Data(id.utf8), to: path)
        return id
    }
}
