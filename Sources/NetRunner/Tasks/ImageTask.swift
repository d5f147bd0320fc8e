public import NetRunnerImage
public import TensorFlowLite

/// A vision model ready to run on images, whichever task it does: what bulk inference,
/// evaluation, the server and streams run, so they take any classifier or detector a user
/// points them at.
///
///     let task = try ImageTask(modelAt: "Models/bundles/mobilenet_v2_1.0_224_uint8.tiobundle")
///     let answer = try task.run(fileAt: "photo.jpg")
///
/// Which tasks it runs is ``VisionTaskRegistry``'s: the classifier, the detector, and any task
/// registered beside them with its ``VisionTaskDefinition`` (docs/adding-a-task.md).
///
/// - Note: Like the interpreter under it, a task is used by one thread at a time; give each
///   thread its own.
public struct ImageTask {
    /// How to load and run a model, whichever task it does: the ``BaseOptions`` every task
    /// shares and the ``ResultOptions`` each task applies with its own defaults (see
    /// ``VisionTaskOptions/apply(_:)``).
    public struct Options: VisionTaskOptions {
        /// The task, or `nil` to tell it from the model (its `model.json` type, else its outputs).
        public var kind: Kind? = nil
        /// Threads, accelerator, error logging and decoding.
        public var baseOptions = BaseOptions()
        /// Which answers to report: each `nil` is the task's default (5 labels for a classifier,
        /// every detection scoring 0.5 or more for a detector).
        public var results = ResultOptions()
        /// A labels file replacing the model's own labels.
        public var labelsPath: String? = nil

        /// Creates the default options.
        public init() {}

        /// Sets which answers to report.
        ///
        /// - Parameter results: The answer options.
        public mutating func apply(_ results: ResultOptions) {
            self.results = results
        }

        /// The most answers per image (``ResultOptions/maxResults``).
        public var maxResults: Int? {
            get { results.maxResults }
            set { results.maxResults = newValue }
        }
        /// The lowest score reported (``ResultOptions/scoreThreshold``).
        public var scoreThreshold: Float? {
            get { results.scoreThreshold }
            set { results.scoreThreshold = newValue }
        }
        /// If not empty, only these labels are reported (``ResultOptions/categoryAllowlist``).
        public var categoryAllowlist: [String] {
            get { results.categoryAllowlist }
            set { results.categoryAllowlist = newValue }
        }
        /// These labels are never reported (``ResultOptions/categoryDenylist``).
        public var categoryDenylist: [String] {
            get { results.categoryDenylist }
            set { results.categoryDenylist = newValue }
        }
        /// A segmenter's mask size (``ResultOptions/maskResolution``).
        public var maskResolution: CategoryMask.Resolution? {
            get { results.maskResolution }
            set { results.maskResolution = newValue }
        }

        /// These options as a task's own: the same base options, the result options applied
        /// with the task's defaults, the rest at its defaults.
        ///
        /// - Parameter type: The task's options type.
        /// - Returns: The task's options.
        public func taskOptions<TaskOptions: VisionTaskOptions>(
            _ type: TaskOptions.Type = TaskOptions.self
        ) -> TaskOptions {
            var options = TaskOptions()
            options.baseOptions = baseOptions
            options.apply(results)
            return options
        }
    }

    /// What the model does.
    public let kind: Kind
    /// The task itself.
    public let task: any VisionTask

    /// The task's definition (its names, results line, printing and drawing), or `nil` for a
    /// task no definition is registered for.
    public var definition: (any VisionTaskDefinition)? {
        VisionTaskRegistry.definition(for: kind)
    }

    /// Loads a model: a TensorIO bundle folder (`.tiobundle`, `.tfbundle`), a zipped bundle,
    /// or a `.tflite` file (its own metadata, else a `model.json` beside it, else defaults).
    ///
    /// - Parameters:
    ///   - path: The model.
    ///   - options: How to load and run it.
    /// - Throws: ``ModelBundleError``, ``InterpreterError`` or ``NetRunnerError`` naming the
    ///   model and what is wrong.
    public init(modelAt path: String, options: Options = Options()) throws {
        try self.init(model: try LoadedModel(.path(path), labelsPath: options.labelsPath), options: options)
    }

    /// Loads a model bundle (see ``init(model:options:)``).
    ///
    /// - Parameters:
    ///   - bundle: The bundle.
    ///   - options: How to load and run it.
    /// - Throws: The errors of ``init(model:options:)``.
    public init(bundle: ModelBundle, options: Options = Options()) throws {
        try self.init(model: try LoadedModel(bundle: bundle, labelsPath: options.labelsPath), options: options)
    }

    /// Makes the task a loaded model does.
    ///
    /// The task comes from `options.kind`, else the description's `model.type`
    /// (`image.classification…`, `…detection…`), else the outputs, counted in the flatbuffer
    /// without compiling the model: one output is a classifier, two (raw anchors) or four
    /// (boxes, classes, scores, count) a detector.
    ///
    /// - Parameters:
    ///   - model: The model.
    ///   - options: How to run it.
    /// - Throws: The errors of the task's initialiser.
    public init(model: LoadedModel, options: Options = Options()) throws {
        let kind = options.kind ?? Self.kind(of: model)
        guard let definition = VisionTaskRegistry.definition(for: kind) else {
            let known = VisionTaskRegistry.kinds.map(\.rawValue).joined(separator: ", ")
            throw NetRunnerError.invalidOption(
                name: "kind", reason: "no task named \(kind) is registered (known: \(known))")
        }
        task = try definition.makeAnyTask(model: model, options: options)
        self.kind = kind
    }

    /// Wraps a task made with its own options (a classifier with an allowlist, say).
    ///
    /// - Parameter task: The task.
    public init(_ task: any VisionTask) {
        self.task = task
        self.kind = type(of: task).kind
    }

    /// The task a model does, from its description's type, else its outputs: the first
    /// registered task that claims their shapes (``VisionTaskDefinition/claims(outputs:)``:
    /// MoveNet's `[1, 1, 17, 3]` is a pose, DeepLab's `[1, 513, 513]` a segmentation), else their
    /// number.
    ///
    /// - Parameter model: The model.
    /// - Returns: The task.
    public static func kind(of model: LoadedModel) -> Kind {
        declaredKind(of: model) ?? kind(outputCount: model.description?.outputs.count ?? model.outputCount ?? 1)
    }

    /// The task a model says it does, if it says.
    ///
    /// Its description's type, else the task that claims its outputs' shapes; `nil` when only
    /// their number is left to go by (a bare `.tflite` of one output is taken for a classifier,
    /// of several for a detector). A command of one task refuses a model that says it does
    /// another.
    ///
    /// - Parameter model: The model.
    /// - Returns: The task, or `nil`.
    public static func declaredKind(of model: LoadedModel) -> Kind? {
        if let kind = kind(type: model.description?.model.type ?? model.assignedType) { return kind }
        if model.description?.model.type == nil, let outputs = model.outputShapes,
            let claimed = VisionTaskRegistry.definitions.first(where: { $0.claims(outputs: outputs) })
        {
            return claimed.kind
        }
        return nil
    }

    /// The task a TensorIO `model.type` names, if a registered task claims it
    /// (`image.classification…`, `…detection…`; see ``VisionTaskDefinition/names(modelType:)``).
    ///
    /// - Parameter type: The description's `model.type`.
    /// - Returns: The task, or `nil` for other types.
    public static func kind(type: String?) -> Kind? {
        type.flatMap { VisionTaskRegistry.definition(modelType: $0)?.kind }
    }

    /// The task a model without a type is taken for: only the library's two are told from
    /// their outputs.
    static func kind(outputCount: Int) -> Kind {
        outputCount == 1 ? .classification : .detection
    }

    /// How images are decoded for this model.
    public var decodingOptions: DecodingOptions { task.decodingOptions }
    /// What the model runs on (``Accelerator/auto`` resolved).
    public var accelerator: Accelerator { task.accelerator }
    /// Why a task that asked for ``Accelerator/auto`` runs on the CPU, or `nil`.
    public var acceleratorFallbackReason: String? { task.acceleratorFallbackReason }

    /// How an image becomes the model's input.
    public var preprocessing: ImagePreprocessing { task.preprocessing }

    /// The labels of the model's classes, if known.
    public var labels: LabelMap? { task.labels }

    /// The image the model received on the last run (see ``VisionTask/inputImage()``).
    public func inputImage() throws -> PixelBuffer { try task.inputImage() }

    /// Runs the model on an image in any form.
    ///
    /// - Parameter image: The image.
    /// - Returns: The answer and the time each stage took.
    /// - Throws: ``ImageError`` for an unreadable image, ``InterpreterError`` if the runtime fails.
    public func run(_ image: ImageInput) throws -> ImageAnswer {
        try task.run(image).imageAnswer
    }

    /// Runs the model on several prepared images: with one run of the model for a task that
    /// batches (a ``BatchingVisionTask``: the classifier's
    /// ``ImageClassifier/classify(batch:capacity:)``), one by one for other tasks.
    ///
    /// - Parameters:
    ///   - batch: Images prepared with this task's ``preprocessing``, with their decode times.
    ///   - capacity: The images per run of the model, fixed by the first call (see
    ///     ``BatchingVisionTask/run(batch:capacity:)``).
    /// - Returns: One answer per image, in order.
    /// - Throws: ``InterpreterError`` from the runtime (for the whole batch).
    public func run(batch: [(image: PreparedImage, decodeTime: Duration)], capacity: Int? = nil) throws -> [ImageAnswer]
    {
        if let batching = task as? any BatchingVisionTask {
            return try Self.answers(of: batching, batch: batch, capacity: capacity)
        }
        return try batch.map { try run($0.image, decodeTime: $0.decodeTime) }
    }

    private static func answers(
        of task: some BatchingVisionTask, batch: [(image: PreparedImage, decodeTime: Duration)], capacity: Int?
    ) throws -> [ImageAnswer] {
        try task.run(batch: batch, capacity: capacity).map(\.imageAnswer)
    }

    /// Runs the model on an image file; see ``run(_:)``.
    public func run(fileAt path: String) throws -> ImageAnswer { try run(.file(path)) }

    /// Runs the model on an image an ``ImagePrefetcher`` prepared with this task's
    /// ``preprocessing``; see ``run(_:)``.
    public func run(_ prepared: PreparedImage, decodeTime: Duration = .zero) throws -> ImageAnswer {
        try run(.prepared(prepared, decodeTime: decodeTime))
    }
}

extension ImageTask.Options {
    /// These options as an ``ImageClassifier``'s (see ``taskOptions(_:)``).
    public var classifierOptions: ImageClassifier.Options { taskOptions() }

    /// These options as an ``ObjectDetector``'s (see ``taskOptions(_:)``).
    public var detectorOptions: ObjectDetector.Options { taskOptions() }
}
