import Foundation

/// Threads of the tests' own for the servers they run in process (`LiveServer`, `InProcessHub`).
///
/// Swift's cooperative pool has as many threads as cores, two here; a test that blocks one
/// (a child process waited for, a blocking socket) takes half of it. A server started on that
/// pool could then wait a minute to bind its port while the rest of the suite runs. A
/// server's tasks prefer this executor instead (`Task(executorPreference:)`), and its
/// structured children (each connection's handler) inherit the preference.
public final class ServerThreads: TaskExecutor, @unchecked Sendable {
    /// The executor every in-process server uses: four threads, mostly waiting.
    public static let shared = ServerThreads(count: 4)

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    private init(count: Int) {
        for index in 0..<count {
            let thread = Thread { [self] in run() }
            thread.name = "live-server-\(index)"
            thread.start()
        }
    }

    /// Runs a job on one of the threads.
    ///
    /// - Parameter job: The job.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
