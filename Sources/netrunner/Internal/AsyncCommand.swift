import Dispatch
import Synchronization

/// Async work run from a synchronous command (ArgumentParser's `run()`, which `main()` calls
/// before any async context exists): started in a task, waited for, its result returned.
enum AsyncCommand {
    /// Runs `body` to the end and returns what it returned, or throws what it threw.
    static func wait<Value: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () async throws(Failure) -> Value
    ) throws(Failure) -> Value {
        let outcome = Mutex<Result<Value, Failure>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let result: Result<Value, Failure>
            do throws(Failure) {
                result = .success(try await body())
            } catch {
                result = .failure(error)
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        // The task stores a result before it signals.
        return try outcome.withLock { $0 }.unsafelyUnwrapped.get()
    }
}
