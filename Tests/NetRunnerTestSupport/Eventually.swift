import Foundation

/// Waiting for a condition with a deadline: how the tests wait for something to happen. A fixed
/// sleep is too short on a loaded machine and wasted on an idle one; a condition polled until a
/// deadline is neither.
public enum Eventually {
    /// A condition that did not hold before its deadline.
    public struct Timeout: Error, CustomStringConvertible {
        /// What was waited for, and for how long.
        public var description: String
    }

    /// Polls `condition` every `interval` until it holds, the thread sleeping between two looks
    /// (for synchronous code; a task uses ``wait(for:upTo:every:until:)``).
    ///
    /// - Parameters:
    ///   - what: What is waited for, for the error.
    ///   - limit: How long to wait at most.
    ///   - interval: The pause between two looks.
    ///   - condition: The condition.
    /// - Throws: ``Timeout`` once `limit` has passed without the condition holding, or what
    ///   `condition` throws.
    public static func waitBlocking(
        for what: String, upTo limit: Duration = .seconds(60), every interval: Duration = .milliseconds(20),
        until condition: () throws -> Bool
    ) throws {
        let deadline = ContinuousClock.now + limit
        while try !condition() {
            guard ContinuousClock.now < deadline else { throw Timeout(description: "\(what): not within \(limit)") }
            let (seconds, attoseconds) = interval.components
            Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) * 1e-18)
        }
    }

    /// Polls `condition` every `interval` until it holds, the task sleeping between two looks
    /// (its thread free for others).
    ///
    /// - Parameters:
    ///   - what: What is waited for, for the error.
    ///   - limit: How long to wait at most.
    ///   - interval: The pause between two looks.
    ///   - condition: The condition.
    /// - Throws: ``Timeout`` once `limit` has passed without the condition holding, or what
    ///   `condition` throws.
    public static func wait(
        for what: String, upTo limit: Duration = .seconds(60), every interval: Duration = .milliseconds(20),
        until condition: () async throws -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + limit
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw Timeout(description: "\(what): not within \(limit)") }
            try await Task.sleep(for: interval)
        }
    }
}
