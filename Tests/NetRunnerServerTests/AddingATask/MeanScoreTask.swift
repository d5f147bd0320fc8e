import NetRunner
import NetRunnerImage
import TensorFlowLite

// A third task, with nothing outside this folder changed: its result, its task and its
// definition, registered once. It runs a classifier model and answers how its scores spread:
// their mean, how many classes it scored, and the best one. This file is the code of
// docs/adding-a-task.md, block by block (scripts/check-readme.py keeps the two one).

/// What the mean-score task answers for one image.
struct MeanScore: RegisteredTaskResult {
    static let kind = ImageTask.Kind("mean_score")

    /// The mean of the model's class scores.
    var mean: Float
    /// How many classes it scored.
    var classes: Int
    /// The best class's label.
    var top: String
    /// The classifier's stage times.
    var timings: ResultTimings
}

/// The task: the library's classifier asked for every class, its scores averaged. Decoding,
/// preprocessing, labels and the accelerator are the classifier's (`WrappingVisionTask`), and
/// it runs batches of images as the classifier does (`BatchingVisionTask`).
final class MeanScoreTask: WrappingVisionTask, BatchingVisionTask {
    static var kind: ImageTask.Kind { MeanScore.kind }

    let wrapped: ImageClassifier

    init(model: LoadedModel, options: ImageClassifier.Options) throws {
        var options = options
        options.maxResults = Int(Int32.max)
        options.scoreThreshold = 0
        wrapped = try ImageClassifier(model: model, options: options)
    }

    func run(_ image: ImageInput) throws -> MeanScore {
        Self.meanScore(of: try wrapped.run(image))
    }

    func run(batch: [(image: PreparedImage, decodeTime: Duration)], capacity: Int?) throws -> [MeanScore] {
        try wrapped.run(batch: batch, capacity: capacity).map(Self.meanScore)
    }

    private static func meanScore(of result: ClassificationResult) -> MeanScore {
        let scores = result.categories.map(\.score)
        let best = result.categories.first
        return MeanScore(
            mean: scores.reduce(0, +) / Float(max(1, scores.count)), classes: scores.count,
            top: best.map { $0.displayName ?? $0.label ?? "class \($0.index)" } ?? "", timings: result.timings)
    }
}

/// Everything else the house needs to know about the task, in one place.
struct MeanScoreDefinition: VisionTaskDefinition {
    var kind: ImageTask.Kind { MeanScore.kind }
    var verb: String { "mean-score" }
    var modelName: String { "score model" }
    var modelNameWithArticle: String { "a score model" }
    var resultsSchema: String {
        #"""
        {"type": "object", "required": ["mean", "classes", "top"], "additionalProperties": false, "properties": {
          "mean": {"type": "number"}, "classes": {"type": "integer", "minimum": 0}, "top": {"type": "string"}}}
        """#
    }

    func names(modelType: String) -> Bool { modelType.hasPrefix("image.mean_score") }

    func makeTask(model: LoadedModel, options: ImageTask.Options) throws -> MeanScoreTask {
        try MeanScoreTask(model: model, options: options.classifierOptions)
    }

    /// `inference_results.mean_score`: `{"mean", "classes", "top"}`.
    private struct Line: Codable {
        var mean: Float
        var classes: Int
        var top: String
    }

    func encode(_ result: MeanScore, to encoder: any Encoder) throws {
        var line = encoder.container(keyedBy: ResultsLineKey.self)
        var results = line.nestedContainer(keyedBy: ResultsLineKey.self, forKey: .inferenceResults)
        try results.encode(
            Line(mean: result.mean, classes: result.classes, top: result.top), forKey: .results(of: kind))
    }

    func decode(from decoder: any Decoder, timings: ResultTimings) throws -> MeanScore {
        let results = try decoder.container(keyedBy: ResultsLineKey.self)
            .nestedContainer(keyedBy: ResultsLineKey.self, forKey: .inferenceResults)
        let line = try results.decode(Line.self, forKey: .results(of: kind))
        return MeanScore(mean: line.mean, classes: line.classes, top: line.top, timings: timings)
    }

    func csvFields(_ result: MeanScore) -> (answer: String, score: String, results: String) {
        (result.top, String(result.mean), "classes:\(result.classes)")
    }

    func textLines(_ result: MeanScore, image: String) -> [String] {
        [image, "  mean score \(result.mean) over \(result.classes) classes, best \(result.top)"]
    }

    func summary(_ result: MeanScore) -> String { "mean \(result.mean)" }

    func shownAnswers(_ result: MeanScore) -> [(label: String, score: Float, box: [Float]?)] {
        [(result.top, result.mean, nil)]
    }
}

/// Registers the mean-score task with the house: once, before its first model is loaded (an
/// app's start). Registering a kind again replaces its definition, so a second call does no
/// harm.
func registerMeanScoreTask() {
    VisionTaskRegistry.register(MeanScoreDefinition())
}
