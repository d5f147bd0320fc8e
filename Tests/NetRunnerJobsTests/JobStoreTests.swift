import Testing

@testable import NetRunnerJobs

/// One store for the server's background jobs (issue 24: album runs and imports each had one).
@Suite("Job store")
struct JobStoreTests {
    struct Job: Sendable {
        var id: String
        var running = true
    }

    @Test("At most maximumRunning run at once; a finished job makes room; the oldest finished go past kept")
    func limits() throws {
        let store = JobStore<Job>(kept: 3, maximumRunning: 2) { $0.running }
        let first = try #require(store.begin { Job(id: $0) })
        let second = try #require(store.begin { Job(id: $0) })
        #expect(first != second && first.count == 16)
        #expect(store.begin { Job(id: $0) } == nil)  // two are running
        #expect(store.begin { Job(id: $0, running: false) } != nil)  // finished from the start: taken
        store.update(first) { $0.running = false }
        let third = try #require(store.begin { Job(id: $0) })
        // Four jobs made, three kept: the oldest finished one (first) went.
        #expect(store.all.count == 3 && store.job(first) == nil)
        #expect(store.job(second)?.running == true && store.job(third)?.id == third)
        store.update("unknown") { $0.running = false }  // nothing
        #expect(store.all.filter(\.running).count == 2)
    }
}
