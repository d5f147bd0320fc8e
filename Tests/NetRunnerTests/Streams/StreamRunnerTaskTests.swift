import NetRunner
import NetRunnerImage
import Synchronization
import Testing

/// A stream on any ``AsyncVisionTask`` (the server's engine is one): a refusal the task says is
/// for being busy drops the frame as busy; any other error is a failed frame.
@Suite("Stream runner on an asynchronous task")
struct StreamRunnerTaskTests {
    struct Busy: Error {}
    struct Broken: Error {}

    /// Refuses every frame with `error`.
    struct Refusing: AsyncVisionTask {
        let error: any Error & Sendable

        func run(_ image: ImageInput) async throws -> ImageAnswer { throw error }
        func isBusy(_ error: any Error) -> Bool { error is Busy }
    }

    /// `count` frames of grey, 40 ms apart on the clock of their arrival (past any interval).
    static func frames(_ count: Int) throws -> AsyncStream<VideoFrame> {
        let pixels = try PixelBuffer(width: 8, height: 8, format: .rgb24)
        let start = ContinuousClock.now
        let frames = (0..<count).map {
            VideoFrame(
                pixels: pixels, index: $0, timestampMilliseconds: Double($0) * 40,
                receivedAt: start + .milliseconds(40 * $0))
        }
        return AsyncStream { continuation in
            for frame in frames { continuation.yield(frame) }
            continuation.finish()
        }
    }

    @Test("Busy refusals are frames dropped while busy; other errors are failed frames")
    func busyIsDropped() async throws {
        for (error, busy) in [(Busy() as any Error & Sendable, true), (Broken(), false)] {
            let runner = StreamRunner(task: Refusing(error: error), mode: .video)
            var dropped = 0
            var failed = 0
            for try await event in runner.events(for: try Self.frames(5)) {
                switch event {
                case .dropped(_, .busy): dropped += 1
                case .failed: failed += 1
                default: Issue.record("unexpected \(event)")
                }
            }
            #expect(dropped == (busy ? 5 : 0) && failed == (busy ? 0 : 5), "\(error)")
            #expect(runner.statistics.droppedWhileBusy == (busy ? 5 : 0))
            #expect(runner.statistics.failed == (busy ? 0 : 5))
        }
    }
}
