import NetRunnerImage
import NetRunnerVideo
import Synchronization

/// How far the loop that hands a live stream's answers to the output is behind the runner.
///
/// Frames handed to the runner (each makes one event) against events taken. A frame that comes
/// while the loop is `limit` events behind (stdout read slowly) is held back and counted
/// instead of inferred, so the runner's buffer of ``StreamEvents/liveBufferLimit`` events never
/// fills and no answer is lost: live mode's "latest frame wins", applied to the reader as it
/// is to the model.
final class OutputBacklog: Sendable {
    let limit: Int
    private let handed = Atomic<Int>(0)
    private let takenCount = Atomic<Int>(0)
    private let held = Atomic<Int>(0)

    init(limit: Int) { self.limit = limit }

    /// Whether a frame may go to the runner (if not, it is counted as held back).
    func admit() -> Bool {
        guard handed.load(ordering: .acquiring) - takenCount.load(ordering: .acquiring) < limit else {
            held.add(1, ordering: .relaxed)
            return false
        }
        handed.add(1, ordering: .acquiringAndReleasing)
        return true
    }

    /// The loop took an event.
    func taken() { takenCount.add(1, ordering: .acquiringAndReleasing) }

    /// Frames held back so far.
    var heldBack: Int { held.load(ordering: .relaxed) }
}

/// A live stream's frames, those that come while the output is behind left out (``OutputBacklog``).
struct PacedFrames: AsyncSequence, Sendable {
    typealias Element = VideoFrame
    typealias Failure = any Error

    let base: FrameSource
    let backlog: OutputBacklog

    func makeAsyncIterator() -> Iterator { Iterator(inner: base.makeAsyncIterator(), backlog: backlog) }

    struct Iterator: AsyncIteratorProtocol {
        var inner: FrameSource.Iterator
        let backlog: OutputBacklog

        mutating func next() async throws -> VideoFrame? {
            while let frame = try await inner.next() {
                if backlog.admit() { return frame }
            }
            return nil
        }
    }
}
