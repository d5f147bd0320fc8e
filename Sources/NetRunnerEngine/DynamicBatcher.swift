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
final class DynamicBatcher: Sendable {
    /// One image waiting for its batch.
    struct Pending: Sendable {
        var image: PreparedImage
        var decodeTime: Duration
        var reply: Reply<ImageAnswerWithInput>
    }

    /// The model.
    let served: ServedModel
    private let state = Mutex<(waiting: [Pending], closed: Bool)>(([], false))
    private let arrived = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let maxBatchSize: Int
    private let maxQueueDelay: Duration

    /// The batches run and the images in them, for `/metrics` and the tests.
    let counts = Mutex<(batches: Int, images: Int)>((0, 0))

    /// Makes the batcher's task (the model on the GPU) and starts its thread.
    ///
    /// - Parameters:
    ///   - served: The model (a classifier).
    ///   - options: The task's options (the engine's defaults for the model).
    ///   - maxBatchSize: The most images per invoke.
    ///   - maxQueueDelay: How long the first image of a batch waits for others.
    /// - Throws: The task's loading errors.
    init(served: ServedModel, options: ImageTask.Options, maxBatchSize: Int, maxQueueDelay: Duration) throws {
        self.served = served
        self.maxBatchSize = max(1, maxBatchSize)
        self.maxQueueDelay = maxQueueDelay
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
        let accepted = state.withLock { state in
            guard !state.closed else { return false }
            state.waiting.append(pending)
            return true
        }
        if accepted {
            arrived.signal()
        } else {
            pending.reply.send(.failure(.failed("the server is shutting down")))
        }
    }

    /// Stops taking images; those waiting still run.
    ///
    /// Returns when the thread has ended.
    func close() async {
        state.withLock { $0.closed = true }
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
            let (batch, closed) = state.withLock { state in
                let taken = Array(state.waiting.prefix(maxBatchSize))
                state.waiting.removeFirst(taken.count)
                return (taken, state.closed && state.waiting.isEmpty)
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
            for (pending, answer) in zip(batch, answers) {
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
