public import NetRunnerImage

/// What happened to one frame of a stream.
public enum StreamEvent: Sendable {
    /// The model answered.
    case answered(FrameAnswer)
    /// Live mode left the frame out (it still carries its pixels, for an annotated video).
    case dropped(VideoFrame, DropReason)
    /// The model failed on the frame; the run goes on.
    case failed(VideoFrame, any Error)

    /// Why live mode left a frame out.
    public enum DropReason: String, Sendable, Hashable {
        /// The model was still busy with an earlier frame.
        case busy
        /// The minimum interval since the last run had not passed.
        case interval
    }

    /// The frame the event is about.
    public var frame: VideoFrame {
        switch self {
        case .answered(let answer): return answer.frame
        case .dropped(let frame, _), .failed(let frame, _): return frame
        }
    }
}
