import Dispatch
import Synchronization

/// A fixed set of interpreters (one ``ImageTask`` each) that any number of streams share.
///
/// A task owns an interpreter and is not thread-safe, so the pool lends each to one caller at a
/// time and runs it on its own thread, off Swift's cooperative pool. Callers wait in order for
/// a free task.
///
///     let pool = try VisionTaskPool(count: 2) { try ImageTask(modelAt: "face.tflite") }
///     let answer = try await pool.run(.pixels(frame.pixels))
public final class VisionTaskPool: AsyncVisionTask {
    private struct Lent: @unchecked Sendable {
        let task: ImageTask
        let queue: DispatchQueue
    }

    private struct State {
        var free: [Lent]
        var waiting: [CheckedContinuation<Lent, Never>] = []
    }

    private let state: Mutex<State>
    /// The number of tasks.
    public let count: Int
    /// The task every member does.
    public let kind: ImageTask.Kind
    /// How frames become the model's input (every member's is the same).
    public let preprocessing: ImagePreprocessing

    /// Makes `count` tasks.
    ///
    /// - Parameters:
    ///   - count: The number of interpreters, 1 or more.
    ///   - makeTask: Makes one task (called `count` times, on the caller's thread).
    /// - Throws: What `makeTask` throws.
    public init(count: Int, makeTask: () throws -> ImageTask) throws {
        var lent: [Lent] = []
        for index in 0..<max(1, count) {
            lent.append(Lent(task: try makeTask(), queue: DispatchQueue(label: "netrunner.pool.\(index)")))
        }
        self.count = lent.count
        kind = lent[0].task.kind
        preprocessing = lent[0].task.preprocessing
        state = Mutex(State(free: lent))
    }

    /// Runs a free task on an image, waiting for one if all are busy.
    ///
    /// - Parameter image: The image.
    /// - Returns: The answer.
    /// - Throws: The task's errors.
    public func run(_ image: ImageInput) async throws -> ImageAnswer {
        let lent = await borrow()
        defer { giveBack(lent) }
        return try await withCheckedThrowingContinuation { continuation in
            lent.queue.async {
                continuation.resume(with: Result { try lent.task.run(image) })
            }
        }
    }

    /// Whether every task is in use right now.
    public var isBusy: Bool { state.withLock { $0.free.isEmpty } }

    private func borrow() async -> Lent {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Lent? in
                if let lent = state.free.popLast() { return lent }
                state.waiting.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    private func giveBack(_ lent: Lent) {
        let next = state.withLock { state -> CheckedContinuation<Lent, Never>? in
            if state.waiting.isEmpty {
                state.free.append(lent)
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume(returning: lent)
    }
}
