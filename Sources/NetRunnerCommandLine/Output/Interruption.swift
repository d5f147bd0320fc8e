import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Ctrl-C (SIGINT) and SIGTERM during a long run (`bulk`, `evaluate`, `stream`).
///
/// - Ctrl-C: the run stops taking new images, finishes the ones in flight and ends with
///   whole lines (exit 130); a second Ctrl-C exits at once.
/// - SIGTERM (`timeout`, `kill`, a service manager): the run stops taking new images at once
///   and the process exits 143 within ``terminationGrace``, finished or not. Every results
///   line is written by one `write(2)`, so the file holds whole lines either way.
///
/// The listeners are installed once per process; every instance reads the same state. They
/// run on a serial queue of their own, never on `DispatchQueue.global()`: that queue has one
/// thread per core, which a run's workers (`--threads`, default every core) hold until the run
/// ends, so a signal handled there waited for the end of the run. A serial queue's work goes to
/// libdispatch's overcommit pool, which starts a thread when all the others are busy.
final class Interruption: Sendable {
    /// How long a SIGTERM lets the images in flight finish before the process exits.
    static let terminationGrace: Duration = .seconds(2)

    /// The signal that stopped the run (0: none).
    private static let received = Atomic<Int32>(0)

    /// Where the signals are handled and SIGTERM's grace is timed: busy workers cannot delay it.
    private static let queue = DispatchQueue(label: "netrunner.interruption", qos: .userInteractive)

    private static let listeners: Void = {
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
            source.setEventHandler { Interruption.handle(signalNumber) }
            source.resume()
            keepAlive(source)
        }
    }()

    /// Starts listening (once per process); the listeners live as long as the process.
    init() {
        _ = Self.listeners
    }

    private static func handle(_ signalNumber: Int32) {
        let earlier = received.exchange(signalNumber, ordering: .relaxed)
        if signalNumber == SIGTERM {
            if earlier != SIGTERM {
                // The deadline first: nothing printed below can delay it.
                queue.asyncAfter(deadline: .now() + .seconds(Int(terminationGrace.components.seconds))) {
                    _exit(143)
                }
                Console.diagnostic("")
                Console.diagnostic("Terminated: stopping now (exit 143 within 2 s).")
            }
            return
        }
        if earlier > 0 {
            // A second signal: stop at once (every line written so far is whole).
            _exit(earlier == SIGTERM ? 143 : 130)
        }
        Console.diagnostic("")
        Console.diagnostic("Stopping after the images in flight (Ctrl-C again to stop at once)...")
    }

    /// Signal sources stop when released; these must not be.
    private static func keepAlive(_ source: any DispatchSourceSignal) {
        Unmanaged.passRetained(source as AnyObject).retain().release()
    }

    /// Whether the run must stop taking images.
    var happened: Bool { Self.received.load(ordering: .relaxed) != 0 }

    /// The exit status of a run that stopped: 143 after SIGTERM, else 130.
    var exitCode: Int32 { Self.received.load(ordering: .relaxed) == SIGTERM ? 143 : 130 }
}
