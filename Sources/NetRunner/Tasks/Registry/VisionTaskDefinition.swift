public import NetRunnerImage
public import TensorFlowLite

/// Everything the library, the commands, the server and the reports need to know about one
/// vision task, in one place: a task is a unit.
///
/// A task is its ``VisionTask`` (what it makes of the model's outputs), its result and this
/// definition: its names, how it is made from ``ImageTask/Options``, how its result is written
/// in a results line (``ResultsLine``, the line of `classify --json`, `bulk`, the server and
/// streams) and read back, printed as text, drawn on an image and shown in a gallery.
/// Register it once with ``VisionTaskRegistry/register(_:)`` and ``ImageTask``, bulk
/// inference, the results line and the printers run it. `docs/adding-a-task.md` walks through
/// one.
///
/// The methods take the task's own result; ``VisionTaskRegistry`` calls them with the answer of
/// a model that does this task.
public protocol VisionTaskDefinition: Sendable {
    /// The task.
    associatedtype Task: VisionTask

    /// The task's name, in JSON and messages (`classification`).
    var kind: ImageTask.Kind { get }
    /// The verb of its command and its server route (`classify`).
    var verb: String { get }
    /// What a model that does it is called (`classifier`).
    var modelName: String { get }
    /// The same with its article (`a classifier`), for messages.
    var modelNameWithArticle: String { get }
    /// Whether a GPU runs several images per invoke of this task (``ImageTask/run(batch:capacity:)``):
    /// by default, whether the task is a ``BatchingVisionTask``.
    var runsInBatches: Bool { get }
    /// What is assumed for a bare `.tflite` with no metadata and no `model.json`, in a notice.
    var assumedPreprocessing: String { get }
    /// Whether `netrunner run` and the server's `/run` print a described model of this task
    /// output by output, TensorIO's way (a classifier's labelled scores), rather than running
    /// the task (a detector's boxes).
    var runsAsDescribedModel: Bool { get }
    /// Whether its answers say where in the image (boxes, keypoints, a mask), so that a video
    /// of them shows more than a label: the server's `--stream` runs the first served model of
    /// such a task unless `--stream-model` names one.
    var locatesInImage: Bool { get }

    /// Whether its answers name classes by label (a pose's keypoints have names of their own):
    /// the notice for a bare `.tflite` says then that classes are shown by index.
    var namesClasses: Bool { get }
    /// Whether a model that says nothing of its task (no `model.json` type: a bare `.tflite`)
    /// does this one, told from its outputs (``LoadedModel/outputShapes``). The library's two
    /// first tasks claim none: a model no registered task claims is a classifier with one
    /// output, else a detector.
    ///
    /// - Parameter outputs: Each output's dimensions and element type.
    /// - Returns: Whether the outputs are this task's.
    func claims(outputs: [(dimensions: [Int], dataType: Tensor.DataType?)]) -> Bool

    /// The JSON Schema of its part of a results line, `inference_results.<kind>`, as JSON text
    /// (self-contained: no `$ref`). The server's OpenAPI document describes each registered
    /// task's results with it, and a test holds `docs/results-line.schema.json` to the library's
    /// tasks' schemas.
    var resultsSchema: String { get }

    /// Whether a TensorIO `model.type` names this task.
    ///
    /// - Parameter modelType: The description's `model.type`, lowercased.
    /// - Returns: Whether a model of that type does this task.
    func names(modelType: String) -> Bool

    /// Makes the task for a model, from the options every task shares.
    ///
    /// - Parameters:
    ///   - model: The model.
    ///   - options: The options.
    /// - Returns: The task.
    /// - Throws: The task's initialiser's errors.
    func makeTask(model: LoadedModel, options: ImageTask.Options) throws -> Task

    /// Writes the result's part of a results line: `inference_results.<kind>`, and any key of
    /// its own beside the common ones (``ResultsLineKey`` names them).
    ///
    /// - Parameters:
    ///   - result: The result.
    ///   - encoder: The line's encoder.
    /// - Throws: The encoder's errors.
    func encode(_ result: Task.Result, to encoder: any Encoder) throws

    /// Reads back what ``encode(_:to:)`` wrote.
    ///
    /// - Parameters:
    ///   - decoder: The line's decoder.
    ///   - timings: The line's stage times, in milliseconds.
    /// - Returns: The result.
    /// - Throws: `DecodingError` for a line this task did not write.
    func decode(from decoder: any Decoder, timings: ResultTimings) throws -> Task.Result

    /// The result in the three answer columns of a CSV results file.
    ///
    /// - Parameter result: The result.
    /// - Returns: The best answer, its score and every answer, `;`-separated.
    func csvFields(_ result: Task.Result) -> (answer: String, score: String, results: String)

    /// The result as `classify` and `detect` print it: a line per answer, under a heading line.
    ///
    /// - Parameters:
    ///   - result: The result.
    ///   - image: The image's path.
    /// - Returns: The lines.
    func textLines(_ result: Task.Result, image: String) -> [String]

    /// The result in one line, after a frame's heading (`stream`).
    ///
    /// - Parameter result: The result.
    /// - Returns: The line.
    func summary(_ result: Task.Result) -> String

    /// What a page shows of the result: each answer's label and score, with its box in the
    /// image's pixels (`[x, y, width, height]`) if it has one.
    ///
    /// - Parameter result: The result.
    /// - Returns: The answers, best first.
    func shownAnswers(_ result: Task.Result) -> [(label: String, score: Float, box: [Float]?)]

    /// The original image's size, when the result knows it.
    ///
    /// - Parameter result: The result.
    /// - Returns: The size.
    func imageSize(_ result: Task.Result) -> PixelSize?

    /// The result drawn on the image (annotated images and video).
    ///
    /// - Parameters:
    ///   - result: The result, in the image's pixels.
    ///   - image: The image.
    /// - Returns: An RGB image with the result drawn.
    /// - Throws: ``ImageError`` if the image cannot be converted.
    func draw(_ result: Task.Result, on image: PixelBuffer) throws(ImageError) -> PixelBuffer

    /// The result in the coordinates of an image of another size (a video frame scaled down
    /// for the model, drawn on the full frame).
    ///
    /// - Parameters:
    ///   - result: The result.
    ///   - size: The size it is in.
    ///   - target: The size it is wanted in.
    /// - Returns: The result in `target`'s coordinates.
    func scaled(_ result: Task.Result, from size: PixelSize, to target: PixelSize) -> Task.Result

    /// The task's own answer options (``TaskAnswerOption``), beside the ones every task shares:
    /// query parameters of the server's routes for it (a segmenter's `mask`). None by default.
    var answerOptions: [TaskAnswerOption] { get }

    /// Sets the task's options from its own answer options as a request to the server gave
    /// them: each of ``answerOptions`` at most once, its value one of its ``TaskAnswerOption/values``
    /// (the server checks both); one not given is absent. Called for every request to the
    /// task's routes, none given too, so the server's defaults for the task go here (a
    /// segmenter's mask is the model's size unless `mask=image`). Nothing by default.
    ///
    /// - Parameters:
    ///   - given: The values given, by option name.
    ///   - options: The options the task will be run with.
    func apply(answerOptions given: [String: String], to options: inout ImageTask.Options)

    /// The result as a picture, for a client whose `Accept` names `image/png` first: a
    /// segmenter's category mask. `nil` (the default) answers the results line as for any other.
    ///
    /// - Parameter result: The result.
    /// - Returns: The picture, or `nil`.
    /// - Throws: The picture's encoder's errors.
    func picture(_ result: Task.Result) throws -> TaskPicture?
}

extension VisionTaskDefinition {
    /// Whether the task runs several images per invoke: whether it is a ``BatchingVisionTask``.
    public var runsInBatches: Bool { Task.self is any BatchingVisionTask.Type }

    /// `false`: `netrunner run` runs the task.
    public var runsAsDescribedModel: Bool { false }

    /// `false`: its answers are labels.
    public var locatesInImage: Bool { false }

    /// `true`: its answers are classes.
    public var namesClasses: Bool { true }

    /// Any JSON value, described as unspecified: a task registered without a schema.
    public var resultsSchema: String {
        #"{"description": "A registered task's results; its definition gives no schema."}"#
    }

    /// `false`: the task is never taken from the outputs alone.
    public func claims(outputs: [(dimensions: [Int], dataType: Tensor.DataType?)]) -> Bool { false }

    /// RGB and the input's default scaling.
    public var assumedPreprocessing: String {
        "RGB, the input's default scaling (raw bytes for uint8, values in [0, 1] for float)"
    }

    /// The result as it is: it has no coordinates.
    public func scaled(_ result: Task.Result, from size: PixelSize, to target: PixelSize) -> Task.Result { result }

    /// `nil`.
    public func imageSize(_ result: Task.Result) -> PixelSize? { nil }

    /// None.
    public var answerOptions: [TaskAnswerOption] { [] }

    /// Nothing: the task has no answer options of its own.
    public func apply(answerOptions given: [String: String], to options: inout ImageTask.Options) {}

    /// `nil`: the results line.
    public func picture(_ result: Task.Result) throws -> TaskPicture? { nil }

    /// The image with the result's ``shownAnswers(_:)`` written in the top-left corner.
    public func draw(_ result: Task.Result, on image: PixelBuffer) throws(ImageError) -> PixelBuffer {
        Annotator.drawLabels(shownAnswers(result).map { ($0.label, $0.score, 0) }, on: image)
    }
}
