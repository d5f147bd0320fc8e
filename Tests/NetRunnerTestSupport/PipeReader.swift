public import Foundation

/// Reads a pipe on a thread of its own, blocking, until its end, handing each piece to a closure.
///
/// Tests use this instead of `FileHandle.readabilityHandler`: on Linux that handler arms a
/// libdispatch read source, and installing and clearing such sources from several threads at
/// once corrupts libdispatch's epoll bookkeeping (swift-corelibs-libdispatch issue 949,
/// swift-corelibs-foundation issue 3276). A CI run of this suite died of it: a segfault in
/// `_dispatch_event_loop_drain` while serve, stream and hub tests ran side by side.
public final class PipeReader: @unchecked Sendable {
    private let ended = NSCondition()
    private var done = false

    /// Starts reading `handle` until its end.
    ///
    /// - Parameters:
    ///   - handle: The reading end of a pipe (or any file handle).
    ///   - onChunk: Called on the reader's thread with each piece, in order; never with an
    ///     empty one.
    public init(_ handle: FileHandle, onChunk: @escaping @Sendable (Data) -> Void) {
        Thread.detachNewThread { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                onChunk(chunk)
            }
            ended.withLock {
                done = true
                ended.broadcast()
            }
        }
    }

    /// Waits until the pipe's end was read (every writer closed it): whether it was within `limit`.
    @discardableResult
    public func waitForEnd(upTo limit: Duration = .seconds(10)) -> Bool {
        let (seconds, attoseconds) = limit.components
        let deadline = Date(timeIntervalSinceNow: Double(seconds) + Double(attoseconds) * 1e-18)
        return ended.withLock {
            while !done {
                if !ended.wait(until: deadline) { return done }
            }
            return true
        }
    }
}
