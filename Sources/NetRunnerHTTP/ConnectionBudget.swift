package import HummingbirdCore
package import Logging
package import NIOCore
import Synchronization

/// The connections of a server held as one budget (`--max-connections`), shared by every client
/// address: near the limit, the connections that cost least to drop give way to new ones.
///
/// `--max-connections-per-address` stops one address, not eight (eight hosts, or one IPv6 /61):
/// 8 × 64 bodies sent just above the rate floor held 512 connections, and a good request from
/// another address waited in the kernel's queue. Once the open connections reach the high mark
/// (`limit` less a tenth), each new one makes room down to the low mark (a twentieth of `limit`
/// below it): first the connections idle longest (between requests, or never sent a byte), then
/// the requests whose bodies have come slowest (bytes over the time the server has waited for
/// them), answered `408` with `Connection: close` and closed. A connection whose request is
/// being handled or answered (its body read whole), a WebSocket, and any connection in its
/// first second in that state are never taken. When there is not enough to take, the budget
/// looks again a quarter second later while the server is still near its limit (Hummingbird
/// accepts no more at the limit, so no new connection would ask). The log says so for the 1st,
/// 2nd, 4th, 8th… connection taken since the server was last under half its limit.
///
/// The work is O(1) per event on a connection (a few atomic stores); the budget looks at every
/// connection only near the limit, at most once per new connection or quarter second, and
/// takes a batch each time.
package final class ConnectionBudget: Sendable {
    /// The most connections open at once (`--max-connections`).
    package let limit: Int
    /// From this many open connections on, a new one makes room.
    let high: Int
    /// What room is made down to.
    let low: Int
    /// How long a connection is left alone after its state changed (it connected, its request
    /// started, its answer ended), in nanoseconds.
    let grace: Int64
    /// The pause before looking again when there was not enough to take.
    static let retry = TimeAmount.milliseconds(250)
    private let state = Mutex(State())

    private struct State {
        /// Every connection counted, and whether it is being taken.
        var slots: [ObjectIdentifier: (entry: BudgetEntry, taken: Bool)] = [:]
        /// The connections being taken, not closed yet.
        var taking = 0
        /// Taken since the server was last under half its limit, and since the start.
        var takenInRun = 0
        var taken = 0
        /// A second look is scheduled.
        var retrying = false
    }

    /// A budget.
    ///
    /// - Parameters:
    ///   - limit: The most connections open at once (`--max-connections`); at least 1.
    ///   - grace: How long a connection is left alone after its state changed; at least zero.
    package init(_ limit: Int, grace: Duration = .seconds(1)) {
        self.limit = max(1, limit)
        high = self.limit - self.limit / 10
        low = max(0, high - max(1, self.limit / 20))
        self.grace = max(0, TimeAmount(clamping: grace).nanoseconds)
    }

    /// Counts a connection, and makes room if the server is near its limit.
    func admit(_ entry: BudgetEntry, logger: Logger) {
        state.withLock { $0.slots[ObjectIdentifier(entry)] = (entry, false) }
        makeRoom(on: entry.channel.eventLoop, logger: logger)
    }

    /// Uncounts a connection that has closed.
    func release(_ entry: BudgetEntry) {
        state.withLock { state in
            guard let slot = state.slots.removeValue(forKey: ObjectIdentifier(entry)) else { return }
            if slot.taken { state.taking -= 1 }
            if state.slots.count - state.taking < limit / 2 { state.takenInRun = 0 }
        }
    }

    /// Takes back the choice of a connection that could not be taken (its request went on to
    /// be handled meanwhile).
    private func spare(_ entry: BudgetEntry) {
        state.withLock { state in
            guard let slot = state.slots[ObjectIdentifier(entry)], slot.taken else { return }
            state.slots[ObjectIdentifier(entry)] = (slot.entry, false)
            state.taking -= 1
        }
    }

    /// Chooses the connections to take when at least `high` are live, down to `low`: the idle
    /// ones, longest idle first, then the slowest bodies, at `now` (nanoseconds of uptime);
    /// schedules a second look when short.
    private func choose(now: Int64) -> (chosen: [BudgetEntry], live: Int, short: Bool) {
        state.withLock { state in
            let live = state.slots.count - state.taking
            guard live >= high, !state.retrying else { return ([], live, false) }
            let wanted = live - low
            var idle: [(since: Int64, entry: BudgetEntry)] = []
            var slow: [(rate: Double, entry: BudgetEntry)] = []
            for slot in state.slots.values where !slot.taken {
                switch slot.entry.standing(now: now, grace: grace) {
                case .idle(let since): idle.append((since, slot.entry))
                case .reading(let rate): slow.append((rate, slot.entry))
                case .kept: break
                }
            }
            var chosen = idle.sorted { $0.since < $1.since }.prefix(wanted).map(\.entry)
            if chosen.count < wanted {
                chosen += slow.sorted { $0.rate < $1.rate }.prefix(wanted - chosen.count).map(\.entry)
            }
            for entry in chosen { state.slots[ObjectIdentifier(entry)]?.taken = true }
            state.taking += chosen.count
            let short = chosen.count < wanted
            if short { state.retrying = true }
            return (chosen, live, short)
        }
    }

    /// Takes what ``choose(now:)`` chose, each on its own event loop, and looks again later when
    /// short.
    private func makeRoom(on loop: any EventLoop, logger: Logger) {
        let (chosen, live, short) = choose(now: BudgetEntry.uptime(loop))
        for entry in chosen {
            let channel = entry.channel
            channel.eventLoop.execute { [self] in
                let address = channel.remoteAddress?.ipAddress ?? "?"
                let floor = try? channel.pipeline.syncOperations.handler(type: RequestRateGuard.self)
                guard let what = floor?.evict() else {
                    spare(entry)
                    return
                }
                let (run, total) = state.withLock { state in
                    state.takenInRun += 1
                    state.taken += 1
                    return (state.takenInRun, state.taken)
                }
                guard run & (run - 1) == 0 else { return }
                logger.notice(
                    "connection from \(address) closed to make room: \(live) connections open, --max-connections \(limit); \(what)",
                    metadata: ["taken": "\(run)", "taken_in_all": "\(total)"])
            }
        }
        guard short else { return }
        loop.scheduleTask(in: Self.retry) { [self] in
            state.withLock { $0.retrying = false }
            makeRoom(on: loop, logger: logger)
        }
    }
}

/// One connection's standing in ``ConnectionBudget``: what ``RequestRateGuard`` last published
/// of it, in atomics (written on its event loop, read by the budget from any).
final class BudgetEntry: Sendable {
    /// What a connection is doing, for the budget.
    enum Phase: Int {
        /// No request being read or answered.
        case idle
        /// A request being read, nothing before it still unanswered.
        case reading
        /// Handled, answered, closing, or no longer HTTP: never taken.
        case busy
    }

    /// What a connection is, to the budget at one instant.
    enum Standing {
        /// Idle since the instant (nanoseconds of uptime).
        case idle(since: Int64)
        /// Its request's bytes per second of the server's waiting.
        case reading(rate: Double)
        /// Not to be taken.
        case kept
    }

    let channel: any Channel
    private let phase = Atomic<Int>(Phase.busy.rawValue)
    /// When the phase began, in nanoseconds of uptime.
    private let since = Atomic<Int64>(0)
    private let received = Atomic<Int>(0)
    /// The nanoseconds the server waited for the request, up to `waitingSince`.
    private let waited = Atomic<Int64>(0)
    /// When the server began waiting for bytes still to come; 0 while not waiting.
    private let waitingSince = Atomic<Int64>(0)

    init(channel: any Channel) {
        self.channel = channel
        since.store(Self.uptime(channel.eventLoop), ordering: .relaxed)
    }

    /// The uptime on `loop`'s clock (`NIODeadline.now()` on a real loop), in nanoseconds.
    static func uptime(_ loop: any EventLoop) -> Int64 { Int64(clamping: loop.now.uptimeNanoseconds) }

    /// Records the connection's state; the phase's start when it changed.
    func update(_ phase: Phase, received: Int, waited: TimeAmount, waitingSince: NIODeadline?) {
        if self.phase.exchange(phase.rawValue, ordering: .relaxed) != phase.rawValue {
            since.store(Self.uptime(channel.eventLoop), ordering: .relaxed)
        }
        self.received.store(received, ordering: .relaxed)
        self.waited.store(waited.nanoseconds, ordering: .relaxed)
        self.waitingSince.store(
            waitingSince.map { Int64(clamping: $0.uptimeNanoseconds) } ?? 0, ordering: .relaxed)
    }

    /// The connection's standing at `now`; a phase younger than `grace` is kept.
    func standing(now: Int64, grace: Int64) -> Standing {
        let since = since.load(ordering: .relaxed)
        guard now - since >= grace else { return .kept }
        switch Phase(rawValue: phase.load(ordering: .relaxed)) {
        case .idle: return .idle(since: since)
        case .reading:
            let waitingSince = waitingSince.load(ordering: .relaxed)
            let spent = waited.load(ordering: .relaxed) + (waitingSince > 0 ? max(0, now - waitingSince) : 0)
            return .reading(rate: Double(received.load(ordering: .relaxed)) / (Double(max(spent, grace, 1)) / 1e9))
        case .busy, nil: return .kept
        }
    }
}

extension RequestRateGuard {
    /// Publishes this connection's state to its budget entry, if it has one.
    func publish() {
        guard let budgetEntry else { return }
        let phase: BudgetEntry.Phase =
            if stopped || lingering {
                .busy
            } else if reading {
                !answering && unanswered <= (headRead ? 1 : 0) ? .reading : .busy
            } else {
                !answering && unanswered == 0 ? .idle : .busy
            }
        budgetEntry.update(phase, received: received, waited: waited, waitingSince: waitingSince)
    }

    /// Closes the connection for the budget if it still may be taken: an idle one at once, a
    /// request being read with `408` and `Connection: close` (closed once written, without the
    /// lingering close: the room is needed now).
    ///
    /// - Returns: What was closed, for the log; `nil` if the connection is kept.
    func evict() -> String? {
        guard let context, !stopped, !lingering else { return nil }
        if !reading, !answering, unanswered == 0 {
            stop()
            context.close(promise: nil)
            return "it was idle"
        }
        guard reading, !answering, unanswered <= (headRead ? 1 : 0) else { return nil }
        let spent = waited + (waitingSince.map { now - $0 } ?? .zero)
        stop()
        lingering = true
        let body =
            #"{"error":true,"error_description":"Request Timeout: the request came too slowly for a server out of connections."}"#
        let head =
            "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.utf8.count)\r\n\r\n"
        let written = context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: head + body)))
        written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        return "its request had sent \(received) bytes in \(spent.nanoseconds / 1_000_000) ms"
    }
}

/// A child channel whose connections count in a ``ConnectionBudget``; its inner channel must be
/// a ``RateFlooredChannel`` (whose guard publishes each connection's state).
package typealias BudgetedChannel<Inner: ServerChildChannel> = LayeredChannel<Inner, ConnectionBudget>

extension ConnectionBudget: ChannelLayer {
    /// Counts the connection in the budget until it closes (not one refused at accept).
    package func setup<Inner: ServerChildChannel>(
        channel: any Channel, logger: Logger, inner: Inner
    ) -> EventLoopFuture<Inner.Value> {
        let value = inner.setup(channel: channel, logger: logger)
        let operations = channel.pipeline.syncOperations
        // A connection refused at accept (AddressConnectionCap) closes at once: not counted.
        if (try? operations.handler(type: RefusedConnection.self)) == nil,
            let floor = try? operations.handler(type: RequestRateGuard.self)
        {
            let entry = BudgetEntry(channel: channel)
            floor.budgetEntry = entry
            floor.publish()
            channel.closeFuture.whenComplete { _ in self.release(entry) }
            admit(entry, logger: logger)
        }
        return value
    }
}
