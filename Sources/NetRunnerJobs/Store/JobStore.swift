import NetRunnerSupport
import Synchronization

/// Background jobs of a server's life (album runs, imports): each with a random id and a
/// value that says how it is going, at most `maximumRunning` running at once (a queue of jobs
/// would itself grow without bound: another is refused until one finishes), the last `kept`
/// kept (the oldest finished ones go first).
///
///     let imports = JobStore<ImportJob>(kept: 50, maximumRunning: 2, isRunning: \.isRunning)
///     guard let id = imports.begin({ ImportJob(id: $0, source: url) }) else { return 429 }
///     imports.update(id) { $0.state = "installed" }
package final class JobStore<Job: Sendable>: Sendable {
    private let jobs = Mutex<[(id: String, job: Job)]>([])
    private let kept: Int
    private let maximumRunning: Int
    private let isRunning: @Sendable (Job) -> Bool

    /// Creates a store.
    ///
    /// - Parameters:
    ///   - kept: The most jobs kept, finished or not.
    ///   - maximumRunning: The most jobs running at once.
    ///   - isRunning: Whether a job is still running.
    package init(kept: Int, maximumRunning: Int, isRunning: @escaping @Sendable (Job) -> Bool) {
        self.kept = max(1, kept)
        self.maximumRunning = max(1, maximumRunning)
        self.isRunning = isRunning
    }

    /// Starts a job, unless `maximumRunning` are running (a job that is finished from the
    /// start, such as a run over an empty album, is always taken).
    ///
    /// - Parameter make: The job's first value, from its new id.
    /// - Returns: The id, or `nil` when too many jobs are running.
    package func begin(_ make: (String) -> Job) -> String? {
        let id = SHA256.hex((0..<8).map { _ in UInt8.random(in: 0...255) })
        let job = make(id)
        return jobs.withLock { jobs -> String? in
            if isRunning(job), jobs.count(where: { isRunning($0.job) }) >= maximumRunning { return nil }
            jobs.append((id, job))
            if jobs.count > kept, let finished = jobs.firstIndex(where: { !isRunning($0.job) }) {
                jobs.remove(at: finished)
            }
            return id
        }
    }

    /// Changes a job (nothing when the id is unknown or was dropped).
    ///
    /// - Parameters:
    ///   - id: The job's id.
    ///   - change: The change.
    package func update(_ id: String, _ change: (inout Job) -> Void) {
        jobs.withLock { jobs in
            if let index = jobs.firstIndex(where: { $0.id == id }) { change(&jobs[index].job) }
        }
    }

    /// A job, or `nil`.
    ///
    /// - Parameter id: The job's id.
    /// - Returns: The job.
    package func job(_ id: String) -> Job? {
        jobs.withLock { jobs in jobs.first { $0.id == id }?.job }
    }

    /// Every job kept, oldest first.
    package var all: [Job] { jobs.withLock { $0.map(\.job) } }
}
