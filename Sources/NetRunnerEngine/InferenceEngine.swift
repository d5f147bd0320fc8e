import Dispatch
import FoundationEssentials
package import Logging
package import NetRunner
package import NetRunnerImage
import Synchronization
package import TensorFlowLite

/// The engine behind every front door of the server (`/v1`, `/v2`, the web app): worker
/// threads, each with its own interpreters (TFLite interpreters are not thread-safe), fed by
/// one bounded queue.
///
/// - Every model is read once (``ServedModel/model``) and checked once by the model gate;
///   each worker then makes its own task for each model and warms it up with one run, and
///   the engine is ready (``isReady``) when every worker has done so.
/// - Images are decoded on the workers, never on the server's event loop; a photo of a format
///   the decoder processes take (HEIC, AVIF) is decoded there before it is queued, awaited
///   without a worker (``decodedAhead(_:for:)``), so that a hung decode delays no other photo.
/// - The queue is bounded: when it is full a request fails at once with
///   ``EngineError/busy(queued:)`` (the server answers 503 with `Retry-After`) instead of
///   growing memory.
/// - A task is made per distinct set of answer options (``ImageTask/Options``) and kept, a few
///   per model and worker, so requests with the defaults never build one.
package final class InferenceEngine: Sendable {
    /// How the engine runs.
    package struct Configuration: Sendable {
        /// Worker threads, each with one single-threaded interpreter per model.
        package var threads: Int
        /// The most requests waiting for a worker.
        package var queueCapacity: Int
        /// The largest image accepted, in pixels (checked from the header before decoding).
        package var maximumPixelCount: Int
        /// What the models run on.
        ///
        /// On the GPU each worker still has its own interpreters (one compiled model per model
        /// and worker).
        package var accelerator: Accelerator
        /// On the GPU, the most images of concurrent requests a classifier runs per invoke.
        ///
        /// Triton's dynamic batching (`DynamicBatcher`); 1 turns it off. Ignored on the CPU.
        package var maxBatchSize: Int
        /// How long the first image of a batch waits for others (Triton's
        /// `max_queue_delay_microseconds`).
        package var maxQueueDelay: Duration
        /// Where the engine's photos decode and what large ones wait for, bound around every
        /// job and decode it runs; `nil`: the process's default (``ImageDecoder/isolation`` and
        /// ``ImageDecoder/admission``).
        package var decoding: DecodingEnvironment?
        /// What the model gate holds the engine's models to (their memory, their checks' nice
        /// value), for its start, loads and workers; `nil`: the process's default
        /// (``ModelGate/current`` where the engine is made).
        package var modelGate: ModelGate.Policy?

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - threads: Worker threads (1 or more).
        ///   - queueCapacity: The most requests waiting (default: 16 per thread).
        ///   - maximumPixelCount: The largest image, in pixels.
        ///   - accelerator: What the models run on (the CPU by default).
        ///   - maxBatchSize: On the GPU, the most images per invoke of a classifier (1: no batching).
        ///   - maxQueueDelay: How long a batch waits to fill.
        ///   - decoding: Where photos decode (`nil`: the process's default).
        package init(
            threads: Int, queueCapacity: Int? = nil,
            maximumPixelCount: Int = DecodingOptions.defaultMaximumPixelCount, accelerator: Accelerator = .cpu,
            maxBatchSize: Int = 1, maxQueueDelay: Duration = .milliseconds(2), decoding: DecodingEnvironment? = nil
        ) {
            self.decoding = decoding
            self.maxBatchSize = max(1, maxBatchSize)
            self.maxQueueDelay = maxQueueDelay
            self.threads = max(1, threads)
            self.queueCapacity = queueCapacity ?? 16 * max(1, threads)
            self.maximumPixelCount = maximumPixelCount
            self.accelerator = accelerator
        }
    }

    /// Where a model stands.
    package enum ModelState: Equatable, Sendable {
        /// Being checked, loaded and warmed up.
        case loading
        /// Ready on every worker.
        case ready
        /// It could not be loaded; the reason.
        case failed(String)
        /// Taken out of service (``unload(_:)``): known, not served, until ``load(_:)``.
        case unloaded
    }

    /// The models, in the order given, then those added (``add(_:)``).
    package var models: [ServedModel] { served.withLock { $0 } }
    /// The configuration (its ``Configuration/modelGate`` always set: the one made with, or
    /// the policy current where the engine was made).
    package let configuration: Configuration
    /// What the model gate holds this engine's models to.
    var gatePolicy: ModelGate.Policy { configuration.modelGate ?? ModelGate.current }

    private let served: Mutex<[ServedModel]>
    let queue: JobQueue<Job>
    private let states: Mutex<[String: ModelState]>
    private let details: Mutex<[String: ModelDetails]>
    private let warmedWorkers = Atomic<Int>(0)
    /// The dynamic batchers, by model id (classifiers on the GPU with batching on).
    private let batchers = Mutex<[String: DynamicBatcher]>([:])
    /// The models whose batcher was tried (made, or found not to apply).
    private let batcherTried = Mutex<Set<String>>([])
    private let started = Atomic<Bool>(false)
    /// Every model's counts and times (``statistics(of:)``).
    let statisticsStore = StatisticsStore()
    private let finished: DispatchGroup
    let logger: Logger

    /// Creates an engine; nothing runs until ``start()``.
    ///
    /// - Parameters:
    ///   - models: The models to serve (ids must be unique; later duplicates are dropped).
    ///   - configuration: Threads, queue and limits.
    ///   - logger: Where loading and failures are logged.
    package init(
        models: [ServedModel], configuration: Configuration, logger: Logger = Logger(label: "netrunner.engine")
    ) {
        var seen = Set<String>()
        let unique = models.filter { seen.insert($0.id).inserted }
        self.served = Mutex(unique)
        var configuration = configuration
        // The policy where the engine is made (a server binds its own around its start).
        configuration.modelGate = configuration.modelGate ?? ModelGate.current
        self.configuration = configuration
        self.queue = JobQueue(capacity: configuration.queueCapacity)
        self.states = Mutex(Dictionary(uniqueKeysWithValues: unique.map { ($0.id, ModelState.loading) }))
        self.details = Mutex([:])
        self.finished = DispatchGroup()
        self.logger = logger
    }

    /// Starts the workers: each checks, loads and warms up every model, then takes requests.
    ///
    /// Returns at once: the model gate's checks (a child process per model not checked before,
    /// two at a time in the process) run on a queue of their own, then the workers start. A
    /// caller on Swift's cooperative pool (the server's service) never waits on them: a test
    /// process starting a dozen servers at once had both of its pool's threads held there, and
    /// every other test's server, client and file server stalled with them.
    package func start() {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        // Entered now, so that a shutdown right after this call waits for the workers.
        for _ in 0..<configuration.threads { finished.enter() }
        DispatchQueue(label: "netrunner.engine.start").async { [self] in
            // The model gate runs once per model here, not once per worker.
            for served in models {
                do {
                    try ModelGate.admit(served.model, policy: gatePolicy)
                } catch {
                    setState(.failed("\(error)"), for: served.id)
                    logger.error("model \(served.id) refused: \(error)")
                }
            }
            for index in 0..<configuration.threads {
                DispatchQueue(label: "netrunner.worker.\(index)").async { [self] in
                    let worker = Worker(engine: self)
                    worker.warmUp()
                    warmedWorkers.add(1, ordering: .relaxed)
                    if warmedWorkers.load(ordering: .relaxed) == configuration.threads { markLoadedModelsReady() }
                    while let job = queue.pop() { worker.run(job) }
                    finished.leave()
                }
            }
        }
    }

    /// Whether every model is loaded and warmed up on every worker (failed models excepted).
    package var isReady: Bool { warmedWorkers.load(ordering: .relaxed) == configuration.threads }

    /// The state of a model.
    ///
    /// - Parameter id: The model's id.
    /// - Returns: Its state, or `nil` for an unknown id.
    package func state(of id: String) -> ModelState? { states.withLock { $0[id] } }

    /// The served model with an id.
    ///
    /// - Parameter id: The id.
    /// - Returns: The model.
    /// - Throws: ``EngineError/unknownModel(id:known:)``.
    package func model(_ id: String) throws(EngineError) -> ServedModel {
        let models = self.models
        guard let found = models.first(where: { $0.id == id }) else {
            throw .unknownModel(id: id, known: models.map(\.id))
        }
        return found
    }

    /// Serves one more model (an import): checked by the model gate, loaded and warmed up by
    /// one worker, then ready; the other workers make their interpreters on first use.
    ///
    /// - Parameter model: The model; its id must be new.
    /// - Throws: ``EngineError/modelExists(id:)`` for an id already served,
    ///   ``EngineError/modelUnavailable(id:reason:)`` when it fails to load.
    package func add(_ model: ServedModel) async throws(EngineError) {
        let added = served.withLock { served in
            guard !served.contains(where: { $0.id == model.id }) else { return false }
            served.append(model)
            return true
        }
        guard added else { throw .modelExists(id: model.id) }
        states.withLock { $0[model.id] = .loading }
        try await warmUp(model)
        logger.info("model \(model.id) added from \(model.origin)")
    }

    /// Serves a model again, or for the first time (Triton's `load`).
    ///
    /// The model, read anew, replaces one of its id (unloaded, failed or serving); it is checked by the model gate,
    /// loaded and warmed up by one worker, then ready, and every worker drops its interpreters
    /// of the old one. A model that serves goes on serving while it is loaded again, and goes on
    /// serving if the new file fails (Triton's behaviour): the new one is checked and run once
    /// off the workers before it replaces anything.
    ///
    /// - Parameter model: The model.
    /// - Throws: ``EngineError/modelUnavailable(id:reason:)`` when it fails to load.
    package func load(_ model: ServedModel) async throws(EngineError) {
        if let serving = models.first(where: { $0.id == model.id }), state(of: model.id) == .ready {
            do {
                try await Self.tryOnce(model, accelerator: configuration.accelerator, policy: gatePolicy)
            } catch {
                logger.warning("model \(model.id): the new file failed; the served one goes on: \(error)")
                throw .modelUnavailable(
                    id: model.id,
                    reason: "\(error); the version already served (generation \(serving.generation)) goes on serving")
            }
        }
        let model = served.withLock { served in
            var model = model
            if let index = served.firstIndex(where: { $0.id == model.id }) {
                model.generation = served[index].generation + 1
                served[index] = model
            } else {
                served.append(model)
            }
            return model
        }
        forget(model.id, keepsDetails: state(of: model.id) == .ready)
        states.withLock { if $0[model.id] != .ready { $0[model.id] = .loading } }
        try await warmUp(model)
        logger.info("model \(model.id) loaded from \(model.origin)")
    }

    /// Checks a model with the model gate and runs its default task once on a grey image, on a
    /// queue of its own (neither a worker nor the cooperative pool waits on the gate's child).
    private static func tryOnce(
        _ model: ServedModel, accelerator: Accelerator, policy: ModelGate.Policy
    ) async throws {
        let outcome: Result<Void, any Error> = await withCheckedContinuation { continuation in
            tryQueue.async {
                // Bound for the whole try: the task's interpreter passes the gate too.
                let outcome = ModelGate.$policy.withValue(policy) {
                    Result {
                        try ModelGate.admit(model.model)
                        var options = ImageTask.Options()
                        options.kind = model.kind
                        options.accelerator = accelerator
                        let task = try ImageTask(model: model.model, options: options)
                        let size = task.preprocessing.size
                        let grey = try PixelBuffer(
                            width: size.width, height: size.height, format: .rgb24,
                            bytes: [UInt8](repeating: 128, count: size.width * size.height * 3))
                        _ = try task.run(.pixels(grey))
                    }
                }
                continuation.resume(returning: outcome)
            }
        }
        try outcome.get()
    }
    private static let tryQueue = DispatchQueue(label: "netrunner.engine.reload-check", attributes: .concurrent)

    /// Stops serving a model (Triton's `unload`).
    ///
    /// Its requests are refused (503) until ``load(_:)``; it stays listed, its statistics
    /// kept. Requests already queued still run.
    ///
    /// - Parameter id: The model's id.
    /// - Throws: ``EngineError/unknownModel(id:known:)``.
    package func unload(_ id: String) throws(EngineError) {
        _ = try model(id)
        states.withLock { $0[id] = .unloaded }
        forget(id, keepsDetails: false)
        logger.info("model \(id) unloaded")
    }

    /// A model's counts and cumulative times per stage (Triton's statistics extension).
    ///
    /// - Parameter id: The model's id.
    /// - Returns: Its statistics, empty before its first request.
    package func statistics(of id: String) -> ModelStatistics { statisticsStore.statistics(of: id) }

    /// Drops what the engine made of a model's current version: its batcher, and its details
    /// unless it goes on serving while it is loaded again (the warm-up replaces them).
    private func forget(_ id: String, keepsDetails: Bool) {
        if !keepsDetails { details.withLock { $0[id] = nil } }
        batcherTried.withLock { _ = $0.remove(id) }
        if let batcher = batchers.withLock({ $0.removeValue(forKey: id) }) {
            Task { await batcher.close() }
        }
    }

    /// Checks a model with the model gate and warms it up on one worker; ready, or failed with
    /// the reason.
    private func warmUp(_ model: ServedModel) async throws(EngineError) {
        do {
            try ModelGate.admit(model.model, policy: gatePolicy)
        } catch {
            setState(.failed("\(error)"), for: model.id)
            throw .modelUnavailable(id: model.id, reason: "\(error)")
        }
        let outcome: Result<Void, EngineError> = await withCheckedContinuation { continuation in
            let reply = Reply<Void>(continuation: continuation)
            if !queue.push(.warmUp(model: model, reply: reply)) {
                continuation.resume(returning: .failure(.busy(queued: queue.depth)))
            }
        }
        do {
            try outcome.get()
            states.withLock { $0[model.id] = .ready }
        } catch {
            setState(.failed("\(error)"), for: model.id)
            throw .modelUnavailable(id: model.id, reason: "\(error)")
        }
    }

    /// What a loaded model takes and gives (recorded by the first worker that loads it).
    ///
    /// - Parameter id: The model's id.
    /// - Returns: Its tensors and preprocessing, or `nil` before it is loaded or if it failed.
    package func details(of id: String) -> ModelDetails? { details.withLock { $0[id] } }

    /// Records a model's details: the first worker's, or a model loaded again's (`replacing`).
    func record(_ found: ModelDetails, for id: String, replacing: Bool = false) {
        details.withLock { details in
            if details[id] == nil || replacing { details[id] = found }
        }
    }

    /// Requests waiting for a worker.
    package var queueDepth: Int { queue.depth }

    /// Stops taking requests; those queued and running finish first.
    ///
    /// Returns when every worker has stopped.
    package func shutdown() async {
        queue.close()
        guard started.load(ordering: .relaxed) else { return }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            finished.notify(queue: .global()) { done.resume() }
        }
        for batcher in batchers.withLock({ Array($0.values) }) { await batcher.close() }
    }

    /// The batches a model's dynamic batcher ran and the images in them, or `nil` when it has
    /// none (not a classifier, not on the GPU, batching off).
    ///
    /// - Parameter id: The model's id.
    /// - Returns: The counts.
    package func batchCounts(of id: String) -> (batches: Int, images: Int)? {
        batchers.withLock { $0[id] }?.counts.withLock { $0 }
    }

    /// The model's dynamic batcher, made the first time a worker asks (once per model).
    func batcher(for served: ServedModel, options: ImageTask.Options) -> DynamicBatcher? {
        guard configuration.maxBatchSize > 1, configuration.accelerator != .cpu,
            VisionTaskRegistry.definition(for: served.kind)?.runsInBatches == true
        else { return nil }
        if let existing = batchers.withLock({ $0[served.id] }) { return existing }
        let first = batcherTried.withLock { $0.insert(served.id).inserted }
        guard first else { return nil }  // being made by another worker, or found not to apply
        do {
            let batcher = try DynamicBatcher(
                served: served, options: options, maxBatchSize: configuration.maxBatchSize,
                maxQueueDelay: configuration.maxQueueDelay, maxWaiting: configuration.queueCapacity)
            batchers.withLock { $0[served.id] = batcher }
            logger.info("model \(served.id): dynamic batching, up to \(configuration.maxBatchSize) images per invoke")
            return batcher
        } catch {
            logger.warning("model \(served.id): no dynamic batching: \(error)")
            return nil
        }
    }

    // MARK: Internals

    private func setState(_ state: ModelState, for id: String) {
        states.withLock { states in
            if case .failed = states[id] { return }
            states[id] = state
        }
    }

    private func markLoadedModelsReady() {
        states.withLock { states in
            for (id, state) in states where state == .loading { states[id] = .ready }
        }
        logger.info("engine ready: \(configuration.threads) worker(s), \(served.withLock { $0.count }) model(s)")
    }

    /// Records that a worker could not load a model (every worker would fail alike).
    func loadFailed(_ id: String, _ error: any Error) {
        setState(.failed("\(error)"), for: id)
        logger.error("model \(id) failed to load: \(error)")
    }
}
