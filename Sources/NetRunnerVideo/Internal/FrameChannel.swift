import Synchronization

/// A bounded single-consumer channel: the producer waits while `capacity` elements are unread
/// (back-pressure down to ffmpeg's pipe); the consumer waits for the next element or the end.
final class FrameChannel<Element: Sendable>: Sendable {
    private struct State {
        var buffer: [Element] = []
        var end: Result<Void, any Error>? = nil
        var closedByConsumer = false
        var receiver: CheckedContinuation<Element?, any Error>? = nil
        var senders: [CheckedContinuation<Bool, Never>] = []
    }

    private let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Sends an element, waiting while the channel is full.
    ///
    /// - Returns: `false` when the consumer has gone (stop producing).
    func send(_ element: Element) async -> Bool {
        let (accepted, full) = state.withLock { state -> (Bool, Bool) in
            guard !state.closedByConsumer, state.end == nil else { return (false, false) }
            if let receiver = state.receiver {
                state.receiver = nil
                receiver.resume(returning: element)
                return (true, false)
            }
            state.buffer.append(element)
            return (true, state.buffer.count >= capacity)
        }
        guard accepted else { return false }
        guard full else { return true }
        return await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state -> Bool in
                if state.closedByConsumer || state.buffer.count < capacity { return true }
                state.senders.append(continuation)
                return false
            }
            if resumeNow { continuation.resume(returning: !state.withLock { $0.closedByConsumer }) }
        }
    }

    /// Ends the stream: the consumer gets the buffered elements, then `nil` or the error.
    func finish(_ result: Result<Void, any Error> = .success(())) {
        let receiver = state.withLock { state -> CheckedContinuation<Element?, any Error>? in
            guard state.end == nil else { return nil }
            state.end = result
            defer { state.receiver = nil }
            return state.buffer.isEmpty ? state.receiver : nil
        }
        receiver?.resume(with: result.map { nil })
    }

    /// The consumer stops reading: waiting senders are released with `false`.
    func close() {
        let (senders, receiver) = state.withLock {
            state -> ([CheckedContinuation<Bool, Never>], CheckedContinuation<Element?, any Error>?) in
            state.closedByConsumer = true
            state.buffer.removeAll()
            defer {
                state.senders.removeAll()
                state.receiver = nil
            }
            return (state.senders, state.receiver)
        }
        for sender in senders { sender.resume(returning: false) }
        receiver?.resume(returning: nil)
    }

    /// The next element, or `nil` at the end.
    func next() async throws -> Element? {
        try await withCheckedThrowingContinuation { continuation in
            let (ready, sender) = state.withLock {
                state -> (Result<Element?, any Error>?, CheckedContinuation<Bool, Never>?) in
                if !state.buffer.isEmpty {
                    let element = state.buffer.removeFirst()
                    let sender = state.senders.isEmpty ? nil : state.senders.removeFirst()
                    return (.success(element), sender)
                }
                if let end = state.end { return (end.map { nil }, nil) }
                if state.closedByConsumer { return (.success(nil), nil) }
                state.receiver = continuation
                return (nil, nil)
            }
            sender?.resume(returning: true)
            if let ready { continuation.resume(with: ready) }
        }
    }
}
