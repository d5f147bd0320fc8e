/// What a frame source has done so far: what its summary line reports.
public struct FrameSourceStatistics: Sendable, Hashable {
    /// Frames ffmpeg decoded (after its frame-rate filter, if any).
    public var decoded = 0
    /// Frames that reached Swift.
    public var received = 0
    /// Frames ffmpeg decoded and left out because of `everyNthFrame`.
    public var skippedByEvery = 0
    /// Timestamps the source got wrong (missing, repeated or going back), replaced by
    /// increasing ones.
    public var repairedTimestamps = 0
    /// Times a live source was reconnected after it dropped.
    public var reconnections = 0

    /// Creates empty statistics.
    public init() {}
}
