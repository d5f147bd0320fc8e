import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A one-line progress bar with rate and time left, redrawn in place on stderr, and only when
/// stderr is a terminal (logs and pipes get no carriage-return noise).
final class ProgressBar: Sendable {
    private struct State {
        var done = 0
        var lastDraw: ContinuousClock.Instant?
    }

    private let total: Int
    private let unit: String
    private let start = ContinuousClock.now
    private let state = Mutex(State())
    /// Whether the bar is drawn at all.
    let isVisible: Bool

    /// A bar for `total` items.
    ///
    /// - Parameters:
    ///   - total: How many items the run will do.
    ///   - unit: What an item is called in the rate ("images").
    ///   - enabled: `false` to never draw.
    init(total: Int, unit: String, enabled: Bool = true) {
        self.total = total
        self.unit = unit
        self.isVisible = enabled && isatty(STDERR_FILENO) == 1
    }

    /// Counts one more item done, redrawing at most ten times a second.
    func advance() {
        guard isVisible else { return }
        let line = state.withLock { state -> String? in
            state.done += 1
            let now = ContinuousClock.now
            if let last = state.lastDraw, now - last < .milliseconds(100), state.done < total { return nil }
            state.lastDraw = now
            return render(done: state.done, elapsed: now - start)
        }
        if let line { Console.terminalControl("\r" + line) }
    }

    /// Ends the bar's line, so that what follows starts on a new one.
    func finish() {
        guard isVisible else { return }
        Console.terminalControl("\r\u{1B}[2K")
    }

    private func render(done: Int, elapsed: Duration) -> String {
        let seconds = Console.seconds(elapsed)
        let fraction = total > 0 ? Double(done) / Double(total) : 1
        let width = 30
        let filled = min(width, Int(fraction * Double(width)))
        let bar = String(repeating: "=", count: filled) + String(repeating: " ", count: width - filled)
        let rate = seconds > 0 ? Double(done) / seconds : 0
        let left = rate > 0 ? Double(total - done) / rate : 0
        return "[\(bar)] \(done)/\(total) \(Console.format(fraction * 100, decimals: 0))%  "
            + "\(Console.format(rate, decimals: 1)) \(unit)/s  ETA \(Self.clock(left))\u{1B}[K"
    }

    /// Seconds as m:ss or h:mm:ss.
    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        let (hours, minutes, secs) = (whole / 3600, whole / 60 % 60, whole % 60)
        let twoDigits = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(twoDigits(minutes)):\(twoDigits(secs))" : "\(minutes):\(twoDigits(secs))"
    }
}
