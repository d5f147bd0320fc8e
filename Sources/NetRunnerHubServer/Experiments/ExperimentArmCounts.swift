import NetRunnerHub

/// What the hub keeps of one arm of an experiment: counters and a latency sketch, never the
/// events themselves, so the row stays the same size however many events come (the sketch
/// has at most 2,048 buckets).
///
/// Kept as JSON in `hub_experiment_arms`; decoding checks every count (a tampered row throws,
/// never traps), and each increment saturates at `Int.max` instead of overflowing.
struct ExperimentArmCounts: Codable, Equatable, Sendable {
    /// Clients seen in the arm.
    var clients = 0
    /// Events counted.
    var events = 0
    /// The goal's outcomes.
    var outcomes = 0
    /// The goal's outcomes that succeeded.
    var successes = 0
    /// Numeric outcomes of the goal: how many, their sum and sum of squares.
    var valueCount = 0
    var valueSum = 0.0
    var valueSumOfSquares = 0.0
    /// Inferences, and those that failed.
    var inferences = 0
    var failures = 0
    /// Crashes, and the clients that crashed at least once.
    var crashes = 0
    var crashClients = 0
    /// The inferences' latencies in milliseconds.
    var latency: LatencySketch

    init() throws { latency = try LatencySketch() }

    enum CodingKeys: String, CodingKey {
        case clients, events, outcomes, successes, inferences, failures, crashes, latency
        case valueCount = "value_count"
        case valueSum = "value_sum"
        case valueSumOfSquares = "value_sum_of_squares"
        case crashClients = "crash_clients"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func count(_ key: CodingKeys) throws -> Int {
            let value = try container.decode(Int.self, forKey: key)
            guard value >= 0 else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "negative")
            }
            return value
        }
        clients = try count(.clients)
        events = try count(.events)
        outcomes = try count(.outcomes)
        successes = try count(.successes)
        valueCount = try count(.valueCount)
        inferences = try count(.inferences)
        failures = try count(.failures)
        crashes = try count(.crashes)
        crashClients = try count(.crashClients)
        valueSum = try container.decode(Double.self, forKey: .valueSum)
        valueSumOfSquares = try container.decode(Double.self, forKey: .valueSumOfSquares)
        latency = try container.decode(LatencySketch.self, forKey: .latency)
        guard successes <= outcomes, failures <= inferences, crashClients <= clients, valueSum.isFinite,
            valueSumOfSquares.isFinite, valueSumOfSquares >= 0
        else {
            throw DecodingError.dataCorruptedError(
                forKey: .successes, in: container, debugDescription: "the arm's counts do not add up")
        }
    }

    /// `count + 1`, saturating.
    static func bump(_ count: inout Int, by amount: Int = 1) {
        let (sum, overflow) = count.addingReportingOverflow(amount)
        count = overflow ? Int.max : sum
    }

    /// Counts one event of a client already admitted (its arm and version checked).
    ///
    /// - Parameters:
    ///   - event: The event (its numbers already checked by the route).
    ///   - goal: The experiment's goal outcome.
    ///   - firstCrash: Whether this is the client's first crash.
    mutating func count(_ event: HubExperimentEvent, goal: String, firstCrash: Bool) {
        Self.bump(&events)
        switch event.kind {
        case .outcome:
            guard event.name == goal else { return }
            if let success = event.success {
                Self.bump(&outcomes)
                if success { Self.bump(&successes) }
            }
            if let value = event.value, value.isFinite {
                let (sum, squares) = (valueSum + value, valueSumOfSquares + value * value)
                if sum.isFinite && squares.isFinite {
                    Self.bump(&valueCount)
                    (valueSum, valueSumOfSquares) = (sum, squares)
                }
            }
        case .inference:
            Self.bump(&inferences)
            if event.failed == true { Self.bump(&failures) }
            if let latency = event.latencyMs { _ = self.latency.add(latency) }
        case .crash:
            Self.bump(&crashes)
            if firstCrash { Self.bump(&crashClients) }
        }
    }
}
