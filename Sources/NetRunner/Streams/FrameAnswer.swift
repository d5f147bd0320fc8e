public import NetRunnerImage

/// A model's answer for one frame.
public struct FrameAnswer: Sendable {
    /// The frame.
    public var frame: VideoFrame
    /// The answer, in the source's pixels (``VideoFrame/sourceSize``).
    public var answer: ImageAnswer
    /// When the answer was ready.
    public var answeredAt: ContinuousClock.Instant

    /// Creates an answer.
    ///
    /// - Parameters:
    ///   - frame: The frame.
    ///   - answer: The answer, in the source's pixels.
    ///   - answeredAt: When it was ready.
    public init(frame: VideoFrame, answer: ImageAnswer, answeredAt: ContinuousClock.Instant) {
        self.frame = frame
        self.answer = answer
        self.answeredAt = answeredAt
    }

    /// Milliseconds from the frame's arrival to its answer (waiting for the model included).
    public var delayMilliseconds: Double {
        let (seconds, attoseconds) = (answeredAt - frame.receivedAt).components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
}
