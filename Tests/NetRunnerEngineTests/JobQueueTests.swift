import Synchronization
import Testing

@testable import NetRunnerEngine

/// The engine's bounded queue: background work waits for room instead of polling (issue 24:
/// album runs slept 20 ms and tried again while the queue was full).
@Suite("Job queue")
struct JobQueueTests {
    @Test("waitForRoom returns at once with room, waits while full, and is woken by a worker taking a job")
    func waitsForRoom() async throws {
        let queue = JobQueue<Int>(capacity: 1)
        await queue.waitForRoom()  // empty: at once
        #expect(queue.push(1))
        #expect(!queue.push(2))  // full: a request would get 503
        let woken = Atomic<Bool>(false)
        let waiter = Task {
            await queue.waitForRoom()
            woken.store(true, ordering: .sequentiallyConsistent)
        }
        // Still full: the waiter goes to sleep, and stays asleep until a job is taken.
        let deadline = ContinuousClock.now + .seconds(30)
        while queue.waitingForRoom == 0 {
            guard ContinuousClock.now < deadline else { throw CancellationError() }
            try await Task.sleep(for: .milliseconds(5))
        }
        let early = woken.load(ordering: .sequentiallyConsistent)
        #expect(early == false)
        #expect(queue.pop() == 1)
        await waiter.value
        let late = woken.load(ordering: .sequentiallyConsistent)
        #expect(late == true)
        #expect(queue.push(3))
    }

    @Test("Closing the queue wakes every waiter")
    func closeWakes() async {
        let queue = JobQueue<Int>(capacity: 1)
        #expect(queue.push(1))
        let waiters = (0..<3).map { _ in Task { await queue.waitForRoom() } }
        queue.close()
        for waiter in waiters { await waiter.value }
        #expect(!queue.push(2))
    }
}
