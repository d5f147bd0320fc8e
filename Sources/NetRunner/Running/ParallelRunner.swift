import Dispatch
import NetRunnerImage
import Synchronization

/// Runs many independent jobs (one per image) on several threads, each with its own worker
/// (its own interpreter), and hands the answers back in the jobs' order.
///
/// On a machine with few cores, one single-threaded interpreter per core beats one
/// interpreter using every core: each thread decodes, preprocesses and infers its own
/// images, so no core waits for another, and no decode competes with XNNPACK's parallel
/// loops.
///
///     try ParallelRunner.run(
///         count: files.count, workers: 2,
///         makeWorker: { try ImageClassifier(modelPath: model, options: oneThread) },
///         work: { classifier, index in Result { try classifier.classify(fileAt: files[index]) } },
///         deliver: { index, result in print(files[index], result) })
///
/// - Note: `deliver` runs on the worker threads, one call at a time, in index order.
public enum ParallelRunner {
    /// Runs `work` for every index in `0..<count`.
    ///
    /// - Parameters:
    ///   - count: The number of jobs.
    ///   - workers: The number of threads (and workers); 1 runs on the calling thread.
    ///   - makeWorker: Makes one worker per thread (an interpreter, a classifier).
    ///   - work: Does one job with the thread's worker; never shared between threads.
    ///   - deliver: Receives each job's output, in index order, one call at a time.
    /// - Throws: The first error `makeWorker` throws (no job runs on a thread without a worker).
    public static func run<Worker, Output: Sendable>(
        count: Int, workers: Int,
        makeWorker: @Sendable () throws -> Worker,
        work: @Sendable (inout Worker, Int) -> Output,
        deliver: @Sendable (Int, Output) -> Void
    ) throws {
        guard count > 0 else { return }
        let threads = max(1, min(workers, count))
        let window = 2 * threads
        let state = Mutex(State<Output>())
        let firstError = Mutex<(any Error)?>(nil)
        // A worker that is a window ahead sleeps here until a delivery moves the window.
        let windowMoved = DispatchSemaphore(value: 0)
        // The workers' threads decode where the caller's task would (its bound environment).
        let environment = ImageDecoder.environment
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            ImageDecoder.$environment.withValue(environment) {
                var worker: Worker
                do {
                    worker = try makeWorker()
                } catch {
                    firstError.withLock { if $0 == nil { $0 = error } }
                    return
                }
                while true {
                    // A worker runs at most `window` jobs ahead of the next delivery: one slow image
                    // cannot let the others park outputs without bound (memory), nor start many
                    // images after a cancellation.
                    let taken = state.withLock { state -> (index: Int?, wait: Bool) in
                        guard state.next < count else { return (nil, false) }
                        guard state.next < state.delivered + window else {
                            state.sleepers += 1
                            return (nil, true)
                        }
                        defer { state.next += 1 }
                        return (state.next, false)
                    }
                    if taken.wait {
                        windowMoved.wait()
                        continue
                    }
                    guard let index = taken.index, firstError.withLock({ $0 == nil }) else { return }
                    let output = work(&worker, index)
                    // Deliver in order: park the output, then flush every ready one from the front.
                    let woken = state.withLock { state -> Int in
                        state.done[index] = output
                        let before = state.delivered
                        while let ready = state.done.removeValue(forKey: state.delivered) {
                            deliver(state.delivered, ready)
                            state.delivered += 1
                        }
                        guard state.delivered > before else { return 0 }
                        // The window moved: every sleeper looks again (a semaphore keeps the count,
                        // so a wake-up before its wait is not lost).
                        defer { state.sleepers = 0 }
                        return state.sleepers
                    }
                    for _ in 0..<woken { windowMoved.signal() }
                }
            }
        }
        if let error = firstError.withLock({ $0 }) { throw error }
    }

    private struct State<Output> {
        var next = 0
        var delivered = 0
        var done: [Int: Output] = [:]
        /// Workers asleep on the window.
        var sleepers = 0
    }
}
