import Dispatch
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
        // Outputs are held back until every worker is made: making one (loading a model) briefly
        // captures the process's stderr, and a delivery printing to stderr then would be lost.
        let state = Mutex(State<Output>(workersPending: threads))
        let firstError = Mutex<(any Error)?>(nil)
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            var worker: Worker
            do {
                worker = try makeWorker()
            } catch {
                firstError.withLock { if $0 == nil { $0 = error } }
                state.withLock { $0.workersPending -= 1 }
                return
            }
            state.withLock { state in
                state.workersPending -= 1
                state.flush(deliver)
            }
            while true {
                let index = state.withLock { state -> Int? in
                    guard state.next < count else { return nil }
                    defer { state.next += 1 }
                    return state.next
                }
                guard let index, firstError.withLock({ $0 == nil }) else { return }
                let output = work(&worker, index)
                // Deliver in order: park the output, then flush every ready one from the front.
                state.withLock { state in
                    state.done[index] = output
                    state.flush(deliver)
                }
            }
        }
        if let error = firstError.withLock({ $0 }) { throw error }
    }

    private struct State<Output> {
        var workersPending: Int
        var next = 0
        var delivered = 0
        var done: [Int: Output] = [:]

        /// Delivers every ready output from the front, once every worker is made.
        mutating func flush(_ deliver: (Int, Output) -> Void) {
            guard workersPending == 0 else { return }
            while let ready = done.removeValue(forKey: delivered) {
                deliver(delivered, ready)
                delivered += 1
            }
        }
    }
}
