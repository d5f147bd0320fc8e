/// What a stream run did, frame by frame: the summary of `netrunner stream`.
public struct StreamStatistics: Sendable, Hashable {
    /// Frames that arrived from the source.
    public var received = 0
    /// Frames the model ran on.
    public var inferred = 0
    /// Frames the model failed on (the run goes on).
    public var failed = 0
    /// Live mode: frames dropped because the model was still busy with an earlier one.
    public var droppedWhileBusy = 0
    /// Live mode: frames dropped because the minimum interval had not passed.
    public var droppedByInterval = 0

    /// Creates empty statistics.
    public init() {}
}
