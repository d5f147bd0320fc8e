import Dispatch
import NetRunner
import Synchronization
import TensorFlowLite

/// Triton's dynamic batching for one classifier on the GPU: the workers decode and prepare the
/// images of concurrent requests, and this batcher's one interpreter (one compiled model for
/// the model, whatever the worker count) runs up to ``InferenceEngine/Configuration/maxBatchSize``
/// of them per invoke, waiting at most ``InferenceEngine/Configuration/maxQueueDelay`` for a batch
/// to fill once its first image is there.
///
/// It takes the requests that set no answer options and want no preview (the web page's and
/// `/v2`'s image requests, albums); the others keep running on the workers' own tasks. Each
/// answer equals the image's alone within the GPU's precision.
///
/// Its waiting list is bounded as the engine's queue is: at most `maxWaiting` images (beyond
/// them a request is ``EngineError/busy(queued:)`` at once), none waiting longer than `maxWait`
/// for its batch to start (Triton's queue policy with `REJECT`: it then gets `busy` too); on
/// shutdown the batch in flight finishes and those still waiting are answered at once.
final class DynamicBatcher: Sendable {
    /// One image waiting for its batch.
    struct Pending: Sendable {
        var image: PreparedImage
        var decodeTime: Duration
        var reply: Reply<ImageAnswerWithInput>
        /// When it was queued.
        var queued = ContinuousClock.now
    }

    /// The model.
    let served: ServedModel
    private let state = Mutex<(waiting: [Pending], closed: Bool)>(([], false))
    private let arrived = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let maxBatchSize: Int
    private let maxQueueDelay: Duration
    private let maxWaiting: Int
    private let maxWait: Duration

    /// The batches run and the images in them, for `/metrics` and the tests.
    let counts = Mutex<(batches: Int, images: Int)>((0, 0))

    /// Makes the batcher's task (the model on the GPU) and starts its thread.
    ///
    /// - Parameters:
    ///   - served: The model (a classifier).
    ///   - options: The task's options (the engine's defaults for the model).
    ///   - maxBatchSize: The most images per invoke.
    ///   - maxQueueDelay: How long the first image of a batch waits for others.
    ///   - maxWaiting: The most images waiting (the engine's queue capacity).
    ///   - maxWait: How long an image may wait for its batch to start.
    /// - Throws: The task's loading errors.
    init(
        served: ServedModel, options: ImageTask.Options, maxBatchSize: Int, maxQueueDelay: Duration,
        maxWaiting: Int, maxWait: Duration = .seconds(120)
    ) throws {
        self.served = served
        self.maxBatchSize = max(1, maxBatchSize)
        self.maxQueueDelay = maxQueueDelay
        self.maxWaiting = max(self.maxBatchSize, maxWaiting)
        self.maxWait = maxWait
        let task = try ImageTask(model: served.model, options: options)
        guard task.accelerator == .gpu else { throw NotOnTheGPU() }
        let handoff = TaskHandoff(task)
        DispatchQueue(label: "netrunner.batcher.\(served.id)").async { [self] in
            run(handoff.task)
            finished.signal()
        }
    }

    /// Queues a prepared image; its reply is sent when its batch has run.
    ///
    /// - Parameter pending: The image and where its answer goes.
    func submit(_ pending: Pending) {
        enum Outcome {
            case accepted, closed
            case full(Int)
        }
        let outcome = state.withLock { state -> Outcome in
            guard !state.closed else { return .closed }
            guard state.waiting.count < maxWaiting else { return .full(state.waiting.count) }
            state.waiting.append(pending)
            return .accepted
        }
        switch outcome {
        case .accepted: arrived.signal()
        case .closed: pending.reply.send(.failure(.shuttingDown))
        case .full(let count): pending.reply.send(.failure(.busy(queued: count)))
        }
    }

    /// Stops taking images: the batch in flight finishes, those still waiting are answered
    /// ``EngineError/shuttingDown`` at once (a slow GPU would otherwise hold the drain for
    /// every batch they make).
    ///
    /// Returns when the thread has ended.
    func close() async {
        let waiting = state.withLock { state in
            state.closed = true
            defer { state.waiting.removeAll() }
            return state.waiting
        }
        for pending in waiting { pending.reply.send(.failure(.shuttingDown)) }
        arrived.signal()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                self.finished.wait()
                done.resume()
            }
        }
    }

    private func run(_ task: ImageTask) {
        let clock = ContinuousClock()
        while true {
            arrived.wait()
            // The first image is here (or the batcher is closing): give the batch until the
            // delay to fill.
            let deadline = clock.now + maxQueueDelay
            while state.withLock({ $0.waiting.count < maxBatchSize && !$0.closed }), clock.now < deadline {
                let left = deadline - clock.now
                let nanoseconds = max(
                    0, left.components.seconds * 1_000_000_000 + left.components.attoseconds / 1_000_000_000)
                _ = arrived.wait(timeout: .now() + .nanoseconds(Int(nanoseconds)))
            }
            // Those that waited past maxWait are answered busy, not run late.
            let now = clock.now
            let (batch, expired, closed) = state.withLock { state in
                let expired = state.waiting.filter { now - $0.queued > maxWait }
                if !expired.isEmpty { state.waiting.removeAll { now - $0.queued > maxWait } }
                let taken = Array(state.waiting.prefix(maxBatchSize))
                state.waiting.removeFirst(taken.count)
                return (taken, expired, state.closed && state.waiting.isEmpty)
            }
            for (index, pending) in expired.enumerated() {
                pending.reply.send(.failure(.busy(queued: expired.count - index)))
            }
            if !batch.isEmpty { runBatch(batch, task: task) }
            if closed { return }
        }
    }

    private func runBatch(_ batch: [Pending], task: ImageTask) {
        counts.withLock {
            $0.batches += 1
            $0.images += batch.count
        }
        do {
            let answers = try task.run(
                batch: batch.map { (image: $0.image, decodeTime: $0.decodeTime) }, capacity: maxBatchSize)
            batch.first?.reply.record { $0.executionCount += 1 }
            for (pending, answer) in zip(batch, answers) {
                // Each image's share of the batch's time, so that the sums stay the time spent.
                pending.reply.record {
                    $0.computeInfer.add(ModelStatistics.milliseconds(answer.result.inferenceMilliseconds))
                    $0.computeOutput.add(ModelStatistics.milliseconds(answer.result.postprocessingMilliseconds))
                }
                pending.reply.send(.success(ImageAnswerWithInput(answer: answer)))
            }
        } catch {
            for pending in batch { pending.reply.send(.failure(.failed("\(error)"))) }
        }
    }
}

/// The batcher's task runs on the CPU (`auto` found no GPU, or the model is quantized): batching
/// one interpreter would only serialise the workers.
struct NotOnTheGPU: Error, CustomStringConvertible {
    var description: String { "the model runs on the CPU, where the workers' own interpreters are faster" }
}

/// Hands a task made on one thread to the batcher's thread, which alone uses it from then on.
private final class TaskHandoff: @unchecked Sendable {
    let task: ImageTask
    init(_ task: ImageTask) { self.task = task }
}
