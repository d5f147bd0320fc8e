import FoundationEssentials
import NetRunner
import NetRunnerImage
import Synchronization
import TensorFlowLite

/// How a worker answers one job.
struct Reply<Value: Sendable>: Sendable {
    let continuation: CheckedContinuation<Result<Value, EngineError>, Never>
    /// When the job was queued.
    let enqueued = ContinuousClock.now
    /// Where the request is counted (a model's statistics), or `nil` for jobs that are no
    /// request (warm-ups).
    var statistics: (store: StatisticsStore, id: String)? = nil

    init(continuation: CheckedContinuation<Result<Value, EngineError>, Never>) {
        self.continuation = continuation
    }

    /// Records the time the job waited for a worker, now that one takes it.
    func started() {
        guard let statistics else { return }
        let waited = ContinuousClock.now - enqueued
        statistics.store.update(statistics.id) { $0.queue.add(waited) }
    }

    /// Records a stage of the job's work.
    func record(_ change: (inout ModelStatistics) -> Void) {
        guard let statistics else { return }
        statistics.store.update(statistics.id, change)
    }

    func send(_ result: Result<Value, EngineError>) {
        if let statistics {
            let succeeded = if case .success = result { true } else { false }
            statistics.store.finish(statistics.id, succeeded: succeeded, since: enqueued)
        }
        continuation.resume(returning: result)
    }
}

/// An answer and, if asked, the input the model saw as a PNG.
struct ImageAnswerWithInput: Sendable {
    var answer: ImageAnswer
    var input: Data?
}

/// One request for a worker.
enum Job: Sendable {
    case image(
        model: ServedModel, image: ImageInput, options: ImageTask.Options, includeInput: Bool,
        reply: Reply<ImageAnswerWithInput>)
    case tensors(model: ServedModel, inputs: [Data], reply: Reply<[Tensor]>)
    case signature(model: ServedModel, reply: Reply<(inputs: [Tensor], outputs: [Tensor])>)
    /// `decoded`: the photo decoded ahead in a decoder process, else `nil` (the worker decodes).
    case described(model: ServedModel, image: Data, decoded: DecodedImage?, reply: Reply<[String: Model.Output]>)
    case warmUp(model: ServedModel, reply: Reply<Void>)
    /// A photo rendered as a JPEG (``InferenceEngine/render(image:longestSide:source:)``): no
    /// model's.
    case render(image: Data, decoded: DecodedImage?, longestSide: Int, source: String, reply: Reply<RenderedImage>)
}
