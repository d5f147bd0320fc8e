import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Admission by megapixels: large photos share a budget of pixels decoded at once, so that a
/// server's memory stays bounded whatever the mix of requests.
///
/// A decoder's memory grows with the pixels it decodes (a 100-megapixel photo takes 0.3-1.7 GB
/// while it decodes, by format: docs/library.md's table), and a server decodes on every worker
/// at once. With a budget in the decode's ``DecodingEnvironment`` (or the process's default,
/// ``ImageDecoder/admission``), a photo of more than ``threshold``
/// pixels waits, once its header has been read and before any pixel work, until its pixels fit
/// in what the other large decodes in flight leave of ``capacity``; smaller photos never wait.
/// The capacity is at least the largest photo allowed, so every photo gets its turn.
///
///     let environment = DecodingEnvironment(admission: PixelBudget(capacity: 200_000_000))  // two 100 MP at once
public final class PixelBudget: Sendable {
    /// The most pixels of large photos decoded at once.
    public let capacity: Int
    /// Photos of at most this many pixels are not counted (they never wait).
    public let threshold: Int
    private let state = Mutex(State())

    struct State {
        var inUse = 0
        var peak = 0
        var waits = 0
    }

    /// The default ``threshold``: 16 megapixels, above every phone's main camera but the 48 MP
    /// and 200 MP modes.
    public static let defaultThreshold = 16_000_000

    /// Creates a budget.
    ///
    /// - Parameters:
    ///   - capacity: The most pixels of large photos decoded at once.
    ///   - threshold: Photos of at most this many pixels are not counted.
    public init(capacity: Int, threshold: Int = PixelBudget.defaultThreshold) {
        self.capacity = max(capacity, 1)
        self.threshold = max(threshold, 0)
    }

    /// The most pixels counted at once so far, and how many decodes had to wait.
    public var statistics: (peak: Int, waits: Int) { state.withLock { ($0.peak, $0.waits) } }

    /// Takes `pixels` from the budget, waiting for them; returns what was taken (0 for a photo
    /// under the threshold), to give back with ``release(_:)``.
    func acquire(_ pixels: Int) -> Int {
        guard pixels > threshold else { return 0 }
        let wanted = min(pixels, capacity)
        var waited = false
        var pause: UInt32 = 1000
        while true {
            let taken = state.withLock { state -> Bool in
                guard state.inUse + wanted <= capacity else {
                    if !waited { state.waits += 1 }
                    return false
                }
                state.inUse += wanted
                state.peak = max(state.peak, state.inUse)
                return true
            }
            if taken { return wanted }
            waited = true
            // Large decodes take tenths of seconds to seconds: a short poll costs nothing.
            usleep(pause)
            pause = min(pause * 2, 20_000)
        }
    }

    /// Gives back what ``acquire(_:)`` took.
    func release(_ pixels: Int) {
        guard pixels > 0 else { return }
        state.withLock { $0.inUse -= pixels }
    }
}
