import FoundationEssentials
import NetRunnerSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reports what a model did, and what its user made of it, to the experiment running on its
/// alias (`POST /v1/events`, ``HubClient/reportEvents(_:model:alias:experiment:)``): the
/// client side of an A/B test of model versions, as Firebase's apps log events for A/B Testing.
///
///     let downloader = ModelDownloader.modelDownloader()
///     let model = try await downloader.getModel(name: "flowers@production")
///     let reporter = try ExperimentReporter(model: "flowers", alias: "production")
///     reporter.start()
///     let started = ContinuousClock.now
///     let result = try classifier.classify(fileAt: photo)
///     reporter.recordInference(version: model.version, latency: ContinuousClock.now - started)
///     // Later, when the user has picked a suggestion, or not:
///     reporter.recordOutcome("accepted", success: picked, version: model.version)
///
/// - **Recording never waits.** Each record is its JSON line encoded and one `write(2)` to the
///   queue's current file (about 0.2 ms in a debug build on a busy 2-core machine, beside
///   inferences of tens of milliseconds: `ExperimentReporterTests` prints both): nothing is sent,
///   and no lock is held over the network. What was recorded survives the process being killed (the
///   kernel has it); a machine losing power may lose the last lines written.
/// - **The queue is bounded**: at most `maximumQueued` events on disk; past that, new events
///   are not recorded and are counted in ``dropped``.
/// - **Sending** (``flush()``, or every interval after ``start(every:)``): the queue's files,
///   oldest first, at most 500 events each, one batch a file. A file is deleted once the hub has
///   answered it (its receipt counted in ``sent``); it is kept, and tried again with backoff,
///   when the hub cannot be reached or answers 401, 403, 408, 429 or 5xx. A batch the hub
///   refuses whole for good (no experiment runs on the alias any more: 409; 400; 404) is deleted
///   and counted in ``discarded``, so that a queue cannot fill with events nobody will count.
/// - **Each event counts once.** Its id is this reporter's launch id and a number; a batch sent
///   again (the process killed after the hub counted it, before its file was deleted) is
///   answered as duplicates.
/// - **One reporter per queue folder**, held with `flock(2)` while it lives; files a killed
///   process left are sent by the next reporter on the folder.
public final class ExperimentReporter: Sendable {
    /// What the reporter has done so far.
    public struct Counts: Equatable, Sendable {
        /// Events waiting on disk.
        public var queued: Int
        /// Events the hub counted.
        public var accepted: Int
        /// Events the hub had counted already (a batch sent again).
        public var duplicates: Int
        /// Events the hub refused one by one (a version the client is not assigned, a bound).
        public var refused: Int
        /// Events not recorded because the queue was full.
        public var dropped: Int
        /// Events deleted because the hub refused their batch for good.
        public var discarded: Int
    }

    /// The hub reported to.
    public let hub: HubClient
    /// The model's name on the hub.
    public let model: String
    /// The alias whose experiment the events are for.
    public let alias: String
    /// The client's id, the one it resolves the alias with (the staged rollout's).
    public let client: String
    /// The queue's folder.
    public let folder: String
    /// The most events the queue holds on disk.
    public let maximumQueued: Int

    /// Events per file, and per batch: the hub's limit.
    static let batchLimit = 500
    /// This reporter's launch: the first part of its events' ids.
    let launch: String
    let lockDescriptor: Int32
    let state: Mutex<QueueState>
    let nextNumber = Atomic<Int>(0)
    let sending = Mutex<Task<Void, Never>?>(nil)

    /// A reporter with its queue in the hub cache (`<cache>/events/<hub>/<model>@<alias>`).
    ///
    /// - Parameters:
    ///   - hub: The hub (default: `NETRUNNER_HUB`, `NETRUNNER_HUB_TOKEN`; any key may report).
    ///   - cache: The cache whose folder holds the queue (default: the user's).
    ///   - model: The model's name.
    ///   - alias: The alias the model was resolved by.
    ///   - client: The client's id (default: the one ``ModelDownloader`` resolves with).
    ///   - maximumQueued: The most events kept on disk, 1 to 10,000,000.
    /// - Throws: ``HubClientError/storage(path:reason:)`` when the folder cannot be made or
    ///   another process reports from it.
    public convenience init(
        hub: HubClient = HubClient(), cache: HubCache = HubCache(), model: String, alias: String,
        client: String? = nil, maximumQueued: Int = 10_000
    ) throws(HubClientError) {
        let place =
            HubCache.hubKey(hub.address) + "/" + ModelImporter.safeName("\(model)@\(alias)", fallback: "model")
        try self.init(
            hub: hub, model: model, alias: alias, client: client ?? ModelDownloader.clientID(cache: cache),
            folder: cache.folder + "/events/" + place, maximumQueued: maximumQueued)
    }

    /// A reporter with its queue in `folder`.
    ///
    /// - Parameters:
    ///   - hub: The hub.
    ///   - model: The model's name.
    ///   - alias: The alias the model was resolved by.
    ///   - client: The client's id.
    ///   - folder: The queue's folder, made if missing.
    ///   - maximumQueued: The most events kept on disk, 1 to 10,000,000.
    /// - Throws: ``HubClientError/storage(path:reason:)``.
    public init(
        hub: HubClient, model: String, alias: String, client: String, folder: String, maximumQueued: Int = 10_000
    ) throws(HubClientError) {
        guard (1...10_000_000).contains(maximumQueued) else {
            throw .storage(path: folder, reason: "a queue holds 1 to 10,000,000 events, not \(maximumQueued)")
        }
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw .storage(path: folder, reason: "\(error)")
        }
        let descriptor = open(folder + "/lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw .storage(path: folder, reason: String(cString: strerror(errno))) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw .storage(path: folder, reason: "another reporter (another process) sends from this queue")
        }
        (self.hub, self.model, self.alias, self.client) = (hub, model, alias, client)
        (self.folder, self.maximumQueued, self.lockDescriptor) = (folder, maximumQueued, descriptor)
        launch = SHA256.hex((0..<6).map { _ in UInt8.random(in: 0...255) })
        state = Mutex(QueueState.recovered(folder: folder))
    }

    deinit {
        sending.withLock { $0?.cancel() }
        state.withLock { $0.closeCurrent() }
        // Unlocked first: a child forked meanwhile keeps a copy of the descriptor until exec.
        flock(lockDescriptor, LOCK_UN)
        close(lockDescriptor)
    }

    /// Records an outcome the app measured: a binomial one (`accepted`: the user took the
    /// model's suggestion).
    ///
    /// - Parameters:
    ///   - name: The outcome (the experiment's goal, or another).
    ///   - success: Whether it happened.
    ///   - version: The version that made the answer (``CustomModel/version``).
    public func recordOutcome(_ name: String = "accepted", success: Bool, version: Int) {
        record {
            HubExperimentEvent(id: $0, client: client, version: version, kind: .outcome, name: name, success: success)
        }
    }

    /// Records a numeric outcome (a rating, a time to decide).
    ///
    /// A value that is not finite is not recorded.
    public func recordOutcome(_ name: String, value: Double, version: Int) {
        guard value.isFinite else { return }
        record {
            HubExperimentEvent(id: $0, client: client, version: version, kind: .outcome, name: name, value: value)
        }
    }

    /// Records one inference: how long it took and whether it failed.
    ///
    /// - Parameters:
    ///   - version: The version run.
    ///   - latency: How long it took.
    ///   - failed: Whether it failed (threw, or answered nothing usable).
    public func recordInference(version: Int, latency: Duration, failed: Bool = false) {
        let milliseconds = latency.inMilliseconds
        guard milliseconds.isFinite, milliseconds >= 0 else { return }
        record {
            HubExperimentEvent(
                id: $0, client: client, version: version, kind: .inference, latencyMs: milliseconds, failed: failed)
        }
    }

    /// Records that the app crashed running `version` (recorded at its next start).
    public func recordCrash(version: Int) {
        record { HubExperimentEvent(id: $0, client: client, version: version, kind: .crash) }
    }

    /// What the reporter has done so far.
    public var counts: Counts { state.withLock { $0.counts } }

    /// The last reason a batch could not be sent, if the last attempt failed.
    public var lastFailure: String? { state.withLock { $0.lastFailure } }

    func record(_ make: (String) -> HubExperimentEvent) {
        let number = nextNumber.add(1, ordering: .relaxed).oldValue
        guard var line = try? JSONCoding.encoder().encode(make("\(launch)-\(number)")) else { return }
        line.append(0x0A)
        state.withLock { $0.append(line, folder: folder, launch: launch, limit: maximumQueued) }
    }
}
