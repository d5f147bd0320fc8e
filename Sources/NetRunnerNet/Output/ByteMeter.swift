import NetRunnerCommandLine
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One line of transfer progress on stderr, redrawn in place, only when stderr is a terminal.
///
/// `LABEL  [=====     ] 12.3 MB of 50.0 MB`, or the step a transfer has reached. Byte counts are
/// drawn at most ten times a second (the last one always).
final class ByteMeter: Sendable {
    private let isVisible = isatty(STDERR_FILENO) == 1
    private let lastDraw = Mutex<ContinuousClock.Instant?>(nil)

    /// Shows bytes received, with a bar when the total is known.
    func bytes(_ label: String, received: Int, total: Int?) {
        guard isVisible else { return }
        let now = ContinuousClock.now
        let due = lastDraw.withLock { last in
            if let previous = last, now - previous < .milliseconds(100), received != total { return false }
            last = now
            return true
        }
        guard due else { return }
        guard let total, total > 0 else {
            return draw("\(label)  \(Console.megabytes(received))")
        }
        let width = 30
        let filled = min(width, received * width / total)
        draw(
            "\(label)  [\(String(repeating: "=", count: filled))\(String(repeating: " ", count: width - filled))] "
                + "\(Console.megabytes(received)) of \(Console.megabytes(total))")
    }

    /// Shows a step (`unpacking`, `verifying`...).
    func step(_ text: String) {
        guard isVisible else { return }
        draw(text)
    }

    /// Clears the line, so that what follows starts on a clean one.
    func finish() {
        guard isVisible else { return }
        Console.terminalControl("\r\u{1B}[2K")
    }

    private func draw(_ line: String) {
        Console.terminalControl("\r\u{1B}[2K" + line)
    }
}
