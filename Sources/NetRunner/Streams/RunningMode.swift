/// How a vision task runs on a stream of frames: MediaPipe Tasks' running modes.
public enum RunningMode: Sendable, Hashable {
    /// MediaPipe's VIDEO: every frame the source sends, in order, one after the other. The
    /// source waits while the model is busy (nothing is dropped); it may have skipped frames
    /// itself (`every Nth frame`, a frame rate).
    case video
    /// MediaPipe's LIVE_STREAM and the seeds' camera loop: a frame is run only when the model is
    /// free and at least `minimumInterval` has passed since the last run started; the others
    /// are dropped and counted. Answers arrive as they are ready; the latest frame wins.
    case liveStream(minimumInterval: Duration)
}
