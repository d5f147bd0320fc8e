public import NetRunner
import NetRunnerSupport
public import TensorFlowLite

/// Runs a test bundle the way Net Runner's headless mode does: every model on every image,
/// `iterations` times, one result line per run, checked before anything runs.
///
///     let runner = try TestBundleRunner(test: bundle, models: [.init(id: "mobilenet", path: modelPath)])
///     for model in runner.models {
///         let task = try runner.loadTask(model)
///         try runner.run(model, task: task, skipping: []) { record in try results.append(record) }
///     }
///
/// Runs are sequential on one thread (decode, preprocess, infer), as in Net Runner, so the
/// latency of each stage is measured alone; each model first runs once on the first image
/// untimed, so the runtime's first-run set-up is not counted.
public struct TestBundleRunner: Sendable {
    /// A model to run: its id and where it is.
    public struct Model: Equatable, Sendable {
        /// The id results are recorded under.
        public var id: String
        /// The model's bundle folder, zip or `.tflite` file.
        public var path: String
        /// What it runs on (the same model on the CPU and the GPU is two entries, two ids).
        public var accelerator: Accelerator

        /// Creates a model entry.
        ///
        /// - Parameters:
        ///   - id: The id results are recorded under.
        ///   - path: The model's bundle folder, zip or `.tflite` file.
        ///   - accelerator: What it runs on (the CPU by default).
        public init(id: String, path: String, accelerator: Accelerator = .cpu) {
            self.id = id
            self.path = path
            self.accelerator = accelerator
        }
    }

    /// The test.
    public let test: TestBundle
    /// Its metric.
    public let metric: TestMetric
    /// The models, in order.
    public let models: [Model]
    /// Only this shard's images are run (``BulkShard`` of the image as the test names it), or
    /// `nil` for all; shards' results are joined by ``merge(_:into:)``.
    public var shard: BulkShard? = nil
    /// How models are loaded (the thread count; the result limits are set from the metric).
    public let options: ImageTask.Options

    /// Checks that a test can run: its metric is known and its labels have the form the
    /// metric scores.
    ///
    /// - Parameters:
    ///   - test: The test bundle.
    ///   - models: The models to run.
    ///   - threadCount: CPU threads for each model's runtime.
    ///   - exactDecoding: `true` (the default) to decode every JPEG pixel, so the inputs equal
    ///     a full decode and resize (the reference's); `false` to scale large JPEGs while
    ///     decoding, as bulk inference does.
    /// - Throws: ``EvaluationError/invalidTest(file:reason:)`` naming `test.json` and the problem.
    public init(
        test: TestBundle, models: [Model], threadCount: Int = 1, exactDecoding: Bool = true
    ) throws(EvaluationError) {
        let file = test.descriptionPath
        let description = test.description
        guard let metric = TestMetric.named(description.metric) else {
            throw .invalidTest(
                file: file,
                reason: "$.options.metric \"\(description.metric)\" is not a metric NetRunner knows "
                    + "(known: \(TestMetric.knownNames.joined(separator: ", ")))")
        }
        // The labels must all be in the form the metric scores.
        guard let evaluation = TaskEvaluationRegistry.evaluation(for: metric.kind) else {
            throw .invalidTest(
                file: file, reason: "\(description.metric) scores \(metric.kind.rawValue), which is not registered")
        }
        if let other = TaskEvaluationRegistry.all.first(where: {
            $0.kind != metric.kind && $0.labelledImages(in: description) > 0
        }) {
            throw .invalidTest(
                file: file,
                reason:
                    "\(description.metric) scores \(metric.kind.rawValue), but \(other.labelledImages(in: description)) "
                    + "labels are \(other.labelNoun) (give \(evaluation.labelForm), or \(other.metricNoun))")
        }
        if evaluation.labelledImages(in: description) == 0 {
            throw .invalidTest(file: file, reason: "\(description.metric) needs labels with \(evaluation.labelForm)")
        }
        var options = ImageTask.Options()
        options.threadCount = threadCount
        options.scalesWhileDecoding = !exactDecoding
        evaluation.prepare(&options, for: metric)
        self.test = test
        self.metric = metric
        self.models = models
        self.options = options
    }

    /// Loads a model, checking that it does what the metric scores.
    ///
    /// - Parameter model: The model.
    /// - Returns: Its task.
    /// - Throws: The loading errors of ``ImageTask/init(modelAt:options:)``;
    ///   ``EvaluationError/invalidTest(file:reason:)`` when it is the wrong kind of model.
    public func loadTask(_ model: Model) throws -> ImageTask {
        // Loaded as what it says it is, then checked against the metric; a model that says
        // nothing (a bare .tflite, told only by its number of outputs) runs as the task the
        // metric scores when it can, as `--task` would run it: an embedder's single output is
        // no classifier. When it cannot, the refusal below names what it was taken for.
        var options = options
        options.accelerator = model.accelerator
        let loaded = try LoadedModel(.path(model.path), labelsPath: options.labelsPath)
        if ImageTask.declaredKind(of: loaded) == nil {
            var asMetric = options
            asMetric.kind = metric.kind
            if let task = try? ImageTask(model: loaded, options: asMetric) { return task }
        }
        let natural = try ImageTask(model: loaded, options: options)
        guard natural.kind == metric.kind else {
            throw EvaluationError.invalidTest(
                file: test.descriptionPath,
                reason: "model \"\(model.id)\" (\(model.path)) does \(natural.kind.rawValue), "
                    + "but \(test.description.metric) scores \(metric.kind.rawValue)")
        }
        return natural
    }

    /// Every run of a model: each iteration over every image, made as it is needed (a test
    /// of a million iterations plans nothing in memory).
    ///
    /// - Parameter model: The model.
    /// - Returns: The image (as the test names it), its local path (`nil` when it is not read:
    ///   see ``TestBundle/refusal(of:)``) and the iteration, in run order.
    public func runs(of model: Model) -> some Sequence<(image: String, path: String?, iteration: Int)> {
        let images = shardImages.map { (key: $0.key, path: test.localPath(of: $0)) }
        return (1...test.description.iterations).lazy.flatMap { iteration in
            images.lazy.map { (image: $0.key, path: $0.path, iteration: iteration) }
        }
    }

    /// How many runs a test makes per model (in this shard).
    public var runsPerModel: Int { test.description.iterations * shardImages.count }

    /// How many of a model's runs (in this shard) `done` holds: keys of other models, and of
    /// images or iterations this test does not run (a results file an earlier evaluation with
    /// other models wrote), are not counted.
    ///
    /// - Parameters:
    ///   - model: The model.
    ///   - done: Keys (``ResultsLine/key``) of runs already recorded.
    /// - Returns: The runs of `model` among them, from 0 to ``runsPerModel``.
    public func recordedRuns(of model: Model, in done: Set<ExactString>) -> Int {
        guard !done.isEmpty else { return 0 }
        // Read from the keys (what the file holds), not the runs: a test of a million
        // iterations is never listed.
        let images = Set(shardImages.map { ExactString($0.key) })
        let iterations = 1...test.description.iterations
        return done.lazy.filter { key in
            guard let run = ResultsLine.run(ofKey: key, model: model.id) else { return false }
            return iterations.contains(run.iteration) && images.contains(run.image)
        }.count
    }

    /// The test's images this runner runs: all, or its shard's.
    private var shardImages: [TestBundleDescription.ImageSource] {
        guard let shard else { return test.description.images }
        return test.description.images.filter { BulkShard.shard(of: $0.key, count: shard.count) == shard.index }
    }

    /// Joins shards' records of this test into the order one machine runs them (model by model,
    /// iteration by iteration, image by image as the test lists them).
    ///
    /// - Parameters:
    ///   - shards: Each shard's records.
    ///   - modelOrder: The models' ids in run order.
    /// - Returns: The records in run order.
    /// - Throws: ``EvaluationError/unmergeable(file:reason:)`` for a run recorded twice, or a
    ///   record of an image or model this test does not have.
    public func merge(_ shards: [(file: String, records: [ResultsLine])], modelOrder: [String]) throws(EvaluationError)
        -> [ResultsLine]
    {
        let imageIndex = Dictionary(
            test.description.images.enumerated().map { ($1.key, $0) }, uniquingKeysWith: { first, _ in first })
        let modelIndex = Dictionary(modelOrder.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        var seen: [ExactString: String] = [:]
        var keyed: [((Int, Int, Int), ResultsLine)] = []
        for (file, records) in shards {
            for record in records {
                guard let image = imageIndex[record.image], let model = modelIndex[record.model ?? ""] else {
                    throw .unmergeable(
                        file: file,
                        reason: "\(record.image) (model \(record.model ?? "none")) is not a run of this test")
                }
                if let earlier = seen[record.key] {
                    throw .unmergeable(
                        file: file, reason: "\(record.image), iteration \(record.iteration ?? 1), is also in \(earlier)"
                    )
                }
                seen[record.key] = file
                keyed.append(((model, record.iteration ?? 1, image), record))
            }
        }
        return keyed.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// The labels the test expects that a model does not have, each with the model's closest
    /// label: such a label can never be scored correct, a typo scores 0% without a word.
    ///
    /// - Parameter task: The model's task.
    /// - Returns: The unknown labels, sorted, with the closest known label (if any is close).
    public func unknownLabels(for task: ImageTask) -> [(label: String, closest: String?)] {
        guard let labels = task.labels else { return [] }
        let description = test.description
        let expected = TaskEvaluationRegistry.evaluation(for: metric.kind)?.expectedLabels(in: description) ?? []
        let known = Set(labels.labels).union(labels.labels.indices.compactMap { labels.displayName($0) })
        let names = labels.labels.indices.map { labels.displayName($0) ?? labels.labels[$0] }
        return expected.subtracting(known).sorted().map { ($0, closestMatch(to: $0, in: names)) }
    }

    /// Runs a model on every image and iteration not yet done.
    ///
    /// - Parameters:
    ///   - model: The model.
    ///   - task: Its task (from ``loadTask(_:)``).
    ///   - done: Keys (``ResultsLine/key``) of runs already recorded, skipped.
    ///   - isCancelled: Checked before each run.
    ///   - deliver: Receives each run's record; an error it throws stops the run.
    /// - Throws: What `deliver` throws.
    public func run(
        _ model: Model, task: ImageTask, skipping done: Set<ExactString>, isCancelled: () -> Bool = { false },
        deliver: (ResultsLine) throws -> Void
    ) throws {
        let pending = runs(of: model).lazy.filter {
            !done.contains(ResultsLine.key(image: $0.image, model: model.id, iteration: $0.iteration))
        }
        // Untimed warm-up: the runtime's first run sets up its kernels and caches.
        if let first = pending.compactMap(\.path).first { _ = try? task.run(fileAt: first) }
        let refusals = Dictionary(
            test.description.images.map { ($0.key, test.refusal(of: $0)) }, uniquingKeysWith: { first, _ in first })
        for run in pending {
            if isCancelled() { return }
            guard let path = run.path else {
                try deliver(
                    ResultsLine(
                        image: run.image, model: model.id, iteration: run.iteration,
                        error: (refusals[run.image] ?? nil) ?? "\(run.image): not read"))
                continue
            }
            let record: ResultsLine
            do {
                record = ResultsLine(
                    image: run.image, model: model.id, iteration: run.iteration, answer: try task.run(fileAt: path))
            } catch {
                record = ResultsLine(
                    image: run.image, model: model.id, iteration: run.iteration, error: BulkFailure(error).message)
            }
            try deliver(record)
        }
    }
}
