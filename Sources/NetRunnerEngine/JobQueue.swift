import Dispatch
import Synchronization

/// A bounded first-in first-out queue of jobs for the worker threads: `push` never blocks
/// (a full queue says no, and the client gets 503 with `Retry-After`), `pop` blocks a worker
/// until a job comes or the queue closes.
final class JobQueue<Job: Sendable>: Sendable {
    private struct State {
        var jobs: [Job?] = []
        var head = 0
        var count = 0
        var closed = false
    }

    private let state: Mutex<State>
    private let available = DispatchSemaphore(value: 0)
    /// The most jobs waiting at once.
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        state = Mutex(State(jobs: Array(repeating: nil, count: max(1, capacity))))
    }

    /// The jobs waiting.
    var depth: Int { state.withLock { $0.count } }

    /// Adds a job.
    ///
    /// - Returns: `false` when the queue is full or closed (the job was not added).
    func push(_ job: Job) -> Bool {
        let added = state.withLock { state -> Bool in
            guard !state.closed, state.count < capacity else { return false }
            state.jobs[(state.head + state.count) % capacity] = job
            state.count += 1
            return true
        }
        if added { available.signal() }
        return added
    }

    /// The next job; blocks while the queue is empty.
    ///
    /// - Returns: The job, or `nil` once the queue is closed and empty.
    func pop() -> Job? {
        while true {
            available.wait()
            let next = state.withLock { state -> (job: Job?, done: Bool) in
                guard state.count > 0 else { return (nil, state.closed) }
                let job = state.jobs[state.head]
                state.jobs[state.head] = nil
                state.head = (state.head + 1) % capacity
                state.count -= 1
                return (job, false)
            }
            if let job = next.job { return job }
            if next.done {
                available.signal()  // wake the next worker too
                return nil
            }
        }
    }

    /// Stops taking jobs; workers drain what is queued, then `pop` returns `nil`.
    func close() {
        state.withLock { $0.closed = true }
        available.signal()
    }
}
