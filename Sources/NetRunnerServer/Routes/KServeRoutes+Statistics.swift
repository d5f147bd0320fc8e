import FoundationEssentials
import HTTPTypes
import Hummingbird
import NIOCore
import NetRunner
import NetRunnerEngine
import NetRunnerHTTP
import NetRunnerSupport
import TensorFlowLite

/// Triton's statistics extension: counts and cumulative times per model and stage.
extension KServeRoutes {
    // MARK: Statistics (Triton's extension)

    /// One stage's count and cumulative nanoseconds.
    struct StageStatistics: Encodable {
        var count: Int
        var ns: UInt64

        init(_ stage: ModelStatistics.Stage) {
            count = stage.count
            ns = stage.nanoseconds
        }
    }

    /// Triton's `InferStatistics`: requests (success, fail) and their stages.
    struct InferenceStatistics: Encodable {
        var success, fail, queue, computeInput, computeInfer, computeOutput, cacheHit, cacheMiss: StageStatistics
        enum CodingKeys: String, CodingKey {
            case success, fail, queue
            case computeInput = "compute_input"
            case computeInfer = "compute_infer"
            case computeOutput = "compute_output"
            case cacheHit = "cache_hit"
            case cacheMiss = "cache_miss"
        }
    }

    /// Triton's `ModelStatistics` of one version.
    struct ModelStatisticsReply: Encodable {
        var name: String
        var version = "1"
        var lastInference: UInt64
        var inferenceCount: Int
        var executionCount: Int
        var inferenceStats: InferenceStatistics
        var batchStats: [String] = []
        enum CodingKeys: String, CodingKey {
            case name, version
            case lastInference = "last_inference"
            case inferenceCount = "inference_count"
            case executionCount = "execution_count"
            case inferenceStats = "inference_stats"
            case batchStats = "batch_stats"
        }
    }

    /// `{"model_stats": [...]}`.
    struct StatisticsReply: Encodable {
        var modelStats: [ModelStatisticsReply]
        enum CodingKeys: String, CodingKey { case modelStats = "model_stats" }
    }

    /// `GET /v2/models/{name}/stats`: the model's statistics, or 404 for an unknown model.
    func statisticsReply(_ name: String) throws -> Response {
        _ = try engine.model(name)
        return HTTPReply.json(StatisticsReply(modelStats: [statistics(name)]))
    }

    /// A model's statistics in Triton's form.
    func statistics(_ name: String) -> ModelStatisticsReply {
        let kept = engine.statistics(of: name)
        let none = StageStatistics(ModelStatistics.Stage())
        return ModelStatisticsReply(
            name: name, lastInference: kept.lastInference, inferenceCount: kept.inferenceCount,
            executionCount: kept.executionCount,
            inferenceStats: InferenceStatistics(
                success: .init(kept.success), fail: .init(kept.fail), queue: .init(kept.queue),
                computeInput: .init(kept.computeInput), computeInfer: .init(kept.computeInfer),
                computeOutput: .init(kept.computeOutput), cacheHit: none, cacheMiss: none))
    }

    /// JSON's whitespace: space, tab, line feed, carriage return.
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
