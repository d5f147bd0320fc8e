import Foundation
import Synchronization
import Testing

@testable import NetRunner

/// The runner under bulk inference: every job once, delivered in order, at most a window of
/// jobs ahead of the next delivery (workers ahead sleep until a delivery wakes them; they used
/// to poll every 0.5 ms).
@Suite("Parallel runner")
struct ParallelRunnerTests {
    final class Log: Sendable {
        let delivered = Mutex<[Int]>([])
        let started = Atomic<Int>(0)
        let aheadAtMost = Atomic<Int>(0)
        /// Signalled when the other workers have filled the window behind the slow first job.
        let windowFilled = DispatchSemaphore(value: 0)
    }

    @Test("A slow first job: the others run a window ahead and wait, then everything is delivered once, in order")
    func slowFirstJob() throws {
        let log = Log()
        let count = 300
        let workers = 3
        try ParallelRunner.run(
            count: count, workers: workers, makeWorker: { 0 },
            work: { _, index -> Int in
                let started = log.started.add(1, ordering: .sequentiallyConsistent).newValue
                let delivered = log.delivered.withLock { $0.count }
                log.aheadAtMost.max(started - delivered, ordering: .sequentiallyConsistent)
                if started == 2 * workers { log.windowFilled.signal() }
                // The first job ends only once the others have run a whole window ahead of it
                // (they must then sleep until it is delivered), or after 30 s.
                if index == 0 { _ = log.windowFilled.wait(timeout: .now() + 30) }
                return index * 2
            },
            deliver: { index, output in
                #expect(output == index * 2)
                log.delivered.withLock { $0.append(index) }
            })
        #expect(log.delivered.withLock { $0 } == Array(0..<count))
        // Started but not delivered: never more than the window (2 per worker) and the job in hand.
        let ahead = log.aheadAtMost.load(ordering: .sequentiallyConsistent)
        #expect(ahead <= 2 * workers + 1, "\(ahead) jobs ahead")
    }
}
