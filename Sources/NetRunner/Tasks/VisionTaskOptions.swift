import NetRunnerImage
public import TensorFlowLite

/// The options of a vision task: the ``BaseOptions`` every task shares, the task's own (a
/// classifier's top-k, a detector's threshold) and the preprocessing choices the caller makes
/// (each `nil` leaves the choice to the model's description, then the task's defaults), as
/// MediaPipe Tasks splits them.
///
/// The base options read and write through the options themselves too
/// (`options.threadCount = 2`), as before they were grouped.
public protocol VisionTaskOptions: Equatable, Hashable, Sendable {
    /// The default options.
    init()
    /// What every task shares: threads, accelerator, error logging, decoding.
    var baseOptions: BaseOptions { get set }
    /// The caller's preprocessing choices.
    var preprocessingChoices: ImagePreprocessing.Choices { get }
    /// Sets the task's own answer options from the options every task reads, each `nil`
    /// becoming the task's default.
    ///
    /// - Parameter results: Which answers to report.
    mutating func apply(_ results: ResultOptions)
}

extension VisionTaskOptions {
    /// Sets nothing: the task has no answer options.
    public mutating func apply(_ results: ResultOptions) {}

    /// No choices (each `nil`): the task's defaults, then the model's description (the whole
    /// image stretched to the input for the tasks without a cropping option).
    public var preprocessingChoices: ImagePreprocessing.Choices { .init() }

    /// CPU threads for inference (``BaseOptions/threadCount``).
    public var threadCount: Int {
        get { baseOptions.threadCount }
        set { baseOptions.threadCount = newValue }
    }
    /// The hardware the model runs on (``BaseOptions/accelerator``).
    public var accelerator: Accelerator {
        get { baseOptions.accelerator }
        set { baseOptions.accelerator = newValue }
    }
    /// Whether the runtime's own log lines are logged (``BaseOptions/isErrorLoggingEnabled``).
    public var isErrorLoggingEnabled: Bool {
        get { baseOptions.isErrorLoggingEnabled }
        set { baseOptions.isErrorLoggingEnabled = newValue }
    }
    /// The largest image decoded (``BaseOptions/maximumPixelCount``).
    public var maximumPixelCount: Int {
        get { baseOptions.maximumPixelCount }
        set { baseOptions.maximumPixelCount = newValue }
    }
    /// Whether large JPEGs are scaled while decoding (``BaseOptions/scalesWhileDecoding``).
    public var scalesWhileDecoding: Bool {
        get { baseOptions.scalesWhileDecoding }
        set { baseOptions.scalesWhileDecoding = newValue }
    }

}
