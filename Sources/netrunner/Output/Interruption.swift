import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Ctrl-C (SIGINT) and SIGTERM: the run stops taking new images and ends with whole lines.
final class Interruption: Sendable {
    private let flag = Atomic<Bool>(false)

    /// Starts listening; the listeners live as long as the process.
    init() {
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                if self.flag.exchange(true, ordering: .relaxed) {
                    // A second Ctrl-C: stop at once (every line written so far is whole).
                    _exit(130)
                }
                Console.diagnostic("\nStopping after the images in flight (Ctrl-C again to stop at once)...")
            }
            source.resume()
            Self.keepAlive(source)
        }
    }

    /// Signal sources stop when released; these must not be.
    private static func keepAlive(_ source: any DispatchSourceSignal) {
        Unmanaged.passRetained(source as AnyObject).retain().release()
    }

    var happened: Bool { flag.load(ordering: .relaxed) }

    func trigger() { flag.store(true, ordering: .relaxed) }
}
