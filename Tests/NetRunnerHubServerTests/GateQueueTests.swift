import NetRunnerHub
import Testing

@testable import NetRunnerHubServer

/// The gates' queues per model (issue 54): a flood of one model's versions neither refuses
/// another model's evaluation nor delays it past the evaluations already running, and what
/// finds no room waits in the store, read back oldest first.
@Suite("Gate evaluations queue fairly per model")
struct GateQueueTests {
    static func evaluation(_ name: String, _ version: Int, queuedAt: String = "2026-01-01T00:00:00Z")
        -> HubEvaluation
    {
        HubEvaluation(
            name: name, version: version, alias: "production", gateRevision: 1, status: .pending, baseline: nil,
            promotes: false, queuedAt: queuedAt)
    }

    /// The next evaluation's model and version, `nil` when none waits.
    static func next(_ queue: inout GateQueue) -> String? {
        queue.next().map { "\($0.name) \($0.version)" }
    }

    @Test("Another model's evaluation runs next however many one model has waiting; the rest wait in the store")
    func fairness() {
        var queue = GateQueue(perModel: 4, total: 256)
        var added = 0
        for version in 1...60 where queue.add(Self.evaluation("flood", version)) { added += 1 }
        #expect(added == 4 && queue.count == 4)
        #expect(Self.next(&queue) == "flood 1" && queue.runningCount == 1)
        // Room again in the flood's queue, but it keeps its order: the new one waits in the store too.
        let late = queue.add(Self.evaluation("flood", 61))
        let other = queue.add(Self.evaluation("other", 1))
        #expect(!late && other)
        // The other model goes next: it never started one.
        var order = (0..<2).compactMap { _ in Self.next(&queue) }
        #expect(order == ["other 1", "flood 2"])
        // Each model in turn once both have some waiting.
        queue.add(Self.evaluation("other", 2))
        queue.add(Self.evaluation("other", 3))
        order = (0..<3).compactMap { _ in Self.next(&queue) }
        #expect(order == ["other 2", "flood 3", "other 3"])
        // The same version and alias queued again replaces the one waiting, in place.
        queue.add(Self.evaluation("flood", 4, queuedAt: "2026-01-01T00:00:09Z"))
        let replaced = queue.next()
        #expect(replaced?.version == 4 && replaced?.queuedAt == "2026-01-01T00:00:09Z")
        #expect(!queue.isIdle && queue.count == 0)
    }

    @Test("What waited in the store is read back oldest first, until the store has no more")
    func refill() throws {
        var queue = GateQueue(perModel: 2, total: 256)
        for version in 1...5 { queue.add(Self.evaluation("flood", version)) }
        let runningGiven = queue.next()
        let running = try #require(runningGiven)
        #expect(queue.refillable() == ["flood"])
        let askGiven = queue.beginRefill("flood")
        let ask = try #require(askGiven)
        // Two known here (1 running, 1 waiting) and room for one more.
        let twice = queue.beginRefill("flood")
        #expect(ask.limit == 3 && twice == nil)
        let store = (1...5).map { Self.evaluation("flood", $0) }
        queue.endRefill("flood", found: Array(store.prefix(ask.limit)), ask: ask)
        #expect(queue.count == 2 && queue.refillable().isEmpty)
        queue.finished(running)
        var order = (0..<2).compactMap { _ in Self.next(&queue) }
        #expect(order == ["flood 2", "flood 3"])
        // The store's rest (version 1 is recorded): as many as asked for, so read again.
        let secondGiven = queue.beginRefill("flood")
        let second = try #require(secondGiven)
        queue.endRefill("flood", found: Array(store.dropFirst(1).prefix(second.limit)), ask: second)
        #expect(queue.count == 2 && queue.refillable().isEmpty)
        order = (0..<2).compactMap { _ in Self.next(&queue) }
        #expect(order == ["flood 4", "flood 5"])
        // Fewer than asked for: nothing more waits there.
        let thirdGiven = queue.beginRefill("flood")
        let third = try #require(thirdGiven)
        queue.endRefill("flood", found: Array(store.dropFirst(1).prefix(third.limit)), ask: third)
        let done = queue.beginRefill("flood")
        #expect(queue.count == 0 && done == nil)
        for version in 2...5 { queue.finished(Self.evaluation("flood", version)) }
        #expect(queue.isIdle)
    }

    @Test("A refill the store did not answer waits for the next look; one that raced an overflow keeps the mark")
    func stallsAndRaces() throws {
        var queue = GateQueue(perModel: 1, total: 256)
        queue.add(Self.evaluation("m", 1))
        queue.add(Self.evaluation("m", 2))
        _ = queue.next()
        let askGiven = queue.beginRefill("m")
        let ask = try #require(askGiven)
        queue.endRefill("m", found: nil, ask: ask)
        #expect(queue.refillable().isEmpty)
        queue.clearStalls()
        let againGiven = queue.beginRefill("m")
        let again = try #require(againGiven)
        // Another left in the store while the store was read: the model stays marked.
        let left = queue.add(Self.evaluation("m", 3))
        #expect(!left)
        queue.endRefill("m", found: [Self.evaluation("m", 1)], ask: again)
        #expect(queue.count == 0 && queue.refillable() == ["m"])
    }
}
