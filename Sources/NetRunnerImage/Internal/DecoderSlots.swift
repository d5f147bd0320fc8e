// The decoder children lent out at once, waited for by threads (the command line's decodes) and
// by tasks (serve's, which must not hold a thread while another decode hangs) alike.

import Dispatch
import Synchronization

final class DecoderSlots: Sendable {
    private struct State {
        var free: Int
        /// Who waits, in arrival order; each is handed a slot by ``release()``.
        var waiting: [@Sendable () -> Void] = []
    }

    private let state: Mutex<State>

    init(count: Int) {
        state = Mutex(State(free: max(count, 1)))
    }

    /// Takes a slot, suspending (not blocking a thread) until one is free.
    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.free > 0 {
                    state.free -= 1
                    return true
                }
                state.waiting.append { continuation.resume() }
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Takes a slot, blocking this thread until one is free.
    func acquireBlocking() {
        let handed = DispatchSemaphore(value: 0)
        let now = state.withLock { state -> Bool in
            if state.free > 0 {
                state.free -= 1
                return true
            }
            state.waiting.append { handed.signal() }
            return false
        }
        if !now { handed.wait() }
    }

    /// Gives a slot back: to the longest waiter, else to the pool.
    func release() {
        let next = state.withLock { state -> (@Sendable () -> Void)? in
            if state.waiting.isEmpty {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?()
    }
}
