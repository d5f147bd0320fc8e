import Dispatch
import NetRunner

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs blocking work (hashing, unpacking, validating the model, a child process) on a thread
/// of its own, not on the caller's executor.
///
/// The caller's model-gate policy (``ModelGate/current``) is bound on that thread. In a server
/// (the policy's ``ModelGate/Policy/checkNiceness`` above 0) the thread is a new one at that nice
/// value, so that an upload's validation (the model compiled in this process, hashing) runs
/// below the requests' threads (Linux's nice value is per thread; a thread of Dispatch's pool,
/// once niced, could not be put back). Otherwise a thread of Dispatch's pool.
func offloaded<Value: Sendable>(
    _ body: @escaping @Sendable () throws(ImportError) -> Value
) async throws(ImportError) -> Value {
    let policy = ModelGate.current
    let niceness = policy.checkNiceness
    let result: Result<Value, ImportError> = await withCheckedContinuation { continuation in
        let work: @Sendable () -> Void = {
            ModelGate.$policy.withValue(policy) {
                continuation.resume(returning: Result { () throws(ImportError) -> Value in try body() })
            }
        }
        if niceness <= 0 || !NicedThread.start(niceness: niceness, work) {
            DispatchQueue.global().async(execute: work)
        }
    }
    return try result.get()
}

/// A detached thread that lowers its own priority before it runs its work.
enum NicedThread {
    /// The work a thread runs, handed to it through `pthread_create`'s argument.
    private final class Work: Sendable {
        let niceness: Int32
        let body: @Sendable () -> Void
        init(niceness: Int32, body: @escaping @Sendable () -> Void) {
            self.niceness = niceness
            self.body = body
        }
    }

    /// Starts `body` on a new thread at `niceness`; `false` when no thread could be made
    /// (`body` is then not run).
    static func start(niceness: Int32, _ body: @escaping @Sendable () -> Void) -> Bool {
        let work = Unmanaged.passRetained(Work(niceness: niceness, body: body)).toOpaque()
        #if canImport(Glibc)
            var thread = pthread_t()
        #else
            var thread: pthread_t?
        #endif
        let made = pthread_create(
            &thread, nil,
            { argument in
                guard let argument else { return nil }
                let work = Unmanaged<Work>.fromOpaque(argument).takeRetainedValue()
                #if canImport(Glibc)
                    // On Linux PRIO_PROCESS with 0 is the calling thread only.
                    _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, work.niceness)
                #endif
                work.body()
                return nil
            }, work)
        guard made == 0 else {
            Unmanaged<Work>.fromOpaque(work).release()
            return false
        }
        #if canImport(Glibc)
            pthread_detach(thread)
        #else
            if let thread { pthread_detach(thread) }
        #endif
        return true
    }
}
