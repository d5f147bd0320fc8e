import Synchronization

/// The events of a ``StreamRunner``: one per frame, read with `for try await`.
///
/// Reading paces the runner in video mode: it takes the next frame from its source only when
/// the reader is at most ``videoReadAhead`` events behind, so a slow reader (an encoder writing
/// an annotated video, say) slows the source down instead of piling frames up in memory. In live
/// mode the runner never waits (a camera does not); a reader more than ``liveBufferLimit``
/// events behind loses the oldest.
public struct StreamEvents: AsyncSequence, Sendable {
    /// An event.
    public typealias Element = StreamEvent
    /// The frames' error.
    public typealias Failure = any Error

    /// Events video mode runs ahead of its reader.
    public static let videoReadAhead = 2
    /// Events live mode keeps for a reader that falls behind.
    public static let liveBufferLimit = 64

    let stream: AsyncThrowingStream<StreamEvent, any Error>
    let credits: Credits

    /// Starts reading.
    ///
    /// - Returns: The iterator.
    public func makeAsyncIterator() -> Iterator {
        Iterator(inner: stream.makeAsyncIterator(), credits: credits)
    }

    /// Reads events; each one read lets video mode take another frame.
    public struct Iterator: AsyncIteratorProtocol {
        var inner: AsyncThrowingStream<StreamEvent, any Error>.AsyncIterator
        let credits: Credits

        /// The next event, or `nil` when the frames have ended.
        ///
        /// - Returns: The event.
        /// - Throws: The frames' error.
        public mutating func next() async throws -> StreamEvent? {
            let event = try await inner.next()
            if event != nil { credits.give() }
            return event
        }
    }

    /// How many more events video mode may produce before its reader takes one.
    final class Credits: Sendable {
        private struct State {
            var available: Int
            var waiter: CheckedContinuation<Void, Never>?
            var closed = false
        }

        private let state: Mutex<State>

        init(_ available: Int) {
            state = Mutex(State(available: available))
        }

        /// Waits for a credit (returns at once once closed).
        func take() async {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Bool in
                    if state.closed { return true }
                    if state.available > 0 {
                        state.available -= 1
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }

        /// A reader took an event.
        func give() {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let waiter = state.waiter else {
                    state.available += 1
                    return nil
                }
                state.waiter = nil
                return waiter
            }
            waiter?.resume()
        }

        /// The reader has gone: no one waits any more.
        func close() {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.closed = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }
}
