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
        /// Background work waiting for room (``waitForRoom()``), resumed one per job taken.
        var roomWaiters: [CheckedContinuation<Void, Never>] = []
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

    /// The callers of ``waitForRoom()`` asleep now.
    var waitingForRoom: Int { state.withLock { $0.roomWaiters.count } }

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
            let next = state.withLock { state -> (job: Job?, done: Bool, waiter: CheckedContinuation<Void, Never>?) in
                guard state.count > 0 else { return (nil, state.closed, nil) }
                let job = state.jobs[state.head]
                state.jobs[state.head] = nil
                state.head = (state.head + 1) % capacity
                state.count -= 1
                let waiter = state.roomWaiters.isEmpty ? nil : state.roomWaiters.removeFirst()
                return (job, false, waiter)
            }
            next.waiter?.resume()
            if let job = next.job { return job }
            if next.done {
                available.signal()  // wake the next worker too
                return nil
            }
        }
    }

    /// Whether the queue no longer takes jobs (the engine is shutting down).
    var isClosed: Bool { state.withLock { $0.closed } }

    /// Returns once the queue has room for a job, or is closed.
    ///
    /// Background work (an album run) waits here instead of polling, while requests that
    /// cannot wait get 503 at once. Another job may take the room first; the caller then waits
    /// again.
    func waitForRoom() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.closed || state.count < capacity { return true }
                state.roomWaiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Stops taking jobs; workers drain what is queued, then `pop` returns `nil`.
    func close() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.closed = true
            defer { state.roomWaiters = [] }
            return state.roomWaiters
        }
        for waiter in waiters { waiter.resume() }
        available.signal()
    }
}
