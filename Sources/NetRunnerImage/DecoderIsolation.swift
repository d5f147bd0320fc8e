import Dispatch
public import FoundationEssentials
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Decodes the formats whose decoders are not hardened against hostile files in a small pool
/// of child processes, so that a crash, a hang or a runaway allocation in one of them costs one
/// decode an ``ImageError/decoderFailed(source:format:reason:)``, never the process.
///
/// libheif, with libde265 and dav1d under it, is large C++ and C that takes its sizes from the
/// file; a crafted HEIC once crashed `serve` inside it. A server turns isolation on for the whole
/// process, once, before it takes requests:
///
///     ImageDecoder.isolation = DecoderIsolation(.init(children: 2))
///
/// ``ImageDecoder`` then hands every file of ``Configuration/formats`` (HEIC and AVIF by
/// default) to a child, which decodes it with the same options and sends the pixels back over a
/// socket; every other format, and every decode while ``ImageDecoder/isolation`` is `nil` (the
/// command line), stays in process. A child is an executable that calls
/// ``runChildIfRequested(arguments:)`` first thing in `main` (`netrunner` and `netrunner-net`
/// do); it runs with an address-space limit (``Configuration/memoryLimit``) and no core dumps,
/// serves one decode at a time, and is reused until it fails.
public final class DecoderIsolation: Sendable {
    /// How the pool runs its children.
    public struct Configuration: Sendable {
        /// The executable the children run: `nil` finds it as ``executablePath(_:)`` says.
        public var executable: String?
        /// The most children, and so the most decodes at once (callers beyond wait).
        public var children: Int
        /// Each child's address-space limit in bytes (`RLIMIT_AS`); 0 for none.
        public var memoryLimit: Int
        /// How long one decode may take, the child's start included.
        public var timeout: Duration
        /// The formats decoded in children.
        public var formats: Set<ImageFormat>
        /// More environment for the children (tests use it to inject faults).
        package var environment: [String: String] = [:]

        /// The default ``memoryLimit``: 3 GiB of address space, room for a 100-megapixel HEIC
        /// (its YCbCr planes, libheif's RGB image and the copy sent back) besides the runtime.
        public static let defaultMemoryLimit = 3 << 30

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - children: The most children (at least 1).
        ///   - memoryLimit: Each child's address-space limit in bytes; 0 for none.
        ///   - timeout: How long one decode may take.
        ///   - formats: The formats decoded in children.
        ///   - executable: The children's executable, `nil` to find it.
        public init(
            children: Int, memoryLimit: Int = Configuration.defaultMemoryLimit, timeout: Duration = .seconds(60),
            formats: Set<ImageFormat> = [.heif, .avif], executable: String? = nil
        ) {
            self.children = max(children, 1)
            self.memoryLimit = max(memoryLimit, 0)
            self.timeout = timeout
            self.formats = formats
            self.executable = executable
        }
    }

    /// What the pool has done, for metrics and tests.
    public struct Statistics: Sendable, Equatable {
        /// Decodes answered by a child (images and the decoders' own errors).
        public var decodes = 0
        /// Children started.
        public var childrenStarted = 0
        /// Decodes whose child crashed or ended without an answer.
        public var crashes = 0
        /// Decodes whose child ran out of time (it was killed).
        public var timeouts = 0
    }

    /// The configuration.
    public let configuration: Configuration
    private let idle = Mutex<[DecoderChildProcess]>([])
    /// The children lent out, at most ``Configuration/children`` at once.
    private let slots: DispatchSemaphore
    private let counts = Mutex(Statistics())

    /// Creates a pool; no child starts before the first decode.
    ///
    /// - Parameter configuration: How to run the children.
    public init(_ configuration: Configuration) {
        self.configuration = configuration
        self.slots = DispatchSemaphore(value: configuration.children)
    }

    deinit {
        for child in idle.withLock({ $0 }) { child.end() }
    }

    /// What the pool has done so far.
    public var statistics: Statistics { counts.withLock { $0 } }

    /// Decodes `data` in a child with `options`, as ``ImageDecoder/decode(data:options:source:)``
    /// would in process.
    ///
    /// - Parameters:
    ///   - data: The encoded image.
    ///   - format: Its format, as sniffed.
    ///   - options: How to decode.
    ///   - source: The name errors use.
    /// - Returns: The decoded image, the same as an in-process decode.
    /// - Throws: The decoder's own ``ImageError``, or ``ImageError/decoderFailed(source:format:reason:)``
    ///   when the child crashed, ran out of time or could not start.
    public func decode(data: Data, format: ImageFormat, options: DecodingOptions, source: String) throws(ImageError)
        -> DecodedImage
    {
        slots.wait()
        defer { slots.signal() }
        let deadline = DecoderChildProcess.now() + configuration.timeout.seconds
        let child: DecoderChildProcess
        if let reused = idle.withLock({ $0.popLast() }) {
            child = reused
        } else {
            child = try start(format: format, source: source)
        }
        let request = DecoderWire.request(data: data, options: options, source: source)
        let outcome = DecoderWire.exchange(
            request, with: child, deadline: deadline, maximumPixelCount: options.maximumPixelCount)
        switch outcome {
        case .answer(let answer):
            idle.withLock { $0.append(child) }
            counts.withLock { $0.decodes += 1 }
            return try answer.get()
        case .failed(let failure):
            let ending = child.end(grace: failure == .timedOut ? 0 : 0.5)
            let reason: String
            switch failure {
            case .timedOut:
                counts.withLock { $0.timeouts += 1 }
                reason = "took longer than \(configuration.timeout) in its decoder process, which was stopped"
            case .closed, .failed(_):
                counts.withLock { $0.crashes += 1 }
                reason = "crashed in its decoder process (\(ending.description)); nothing else was affected"
            case .malformed(let what):
                counts.withLock { $0.crashes += 1 }
                reason = "sent back \(what) from its decoder process, which was stopped"
            }
            throw .decoderFailed(source: source, format: format, reason: reason)
        }
    }

    private func start(format: ImageFormat, source: String) throws(ImageError) -> DecoderChildProcess {
        let executable: String
        do throws(ImageError) {
            executable = try Self.executablePath(configuration.executable)
        } catch {
            throw .decoderFailed(source: source, format: format, reason: "has no decoder process: \(error)")
        }
        var environment = configuration.environment
        // A crash in a child is expected, and answered for; Swift's backtracer would keep a
        // process of its own alive for minutes to print it.
        environment["SWIFT_BACKTRACE"] = "enable=no"
        let arguments = [executable, Self.childMarker, String(configuration.memoryLimit)]
        switch DecoderChildProcess.spawn(arguments, environment: environment) {
        case .success(let child):
            counts.withLock { $0.childrenStarted += 1 }
            return child
        case .failure(let failure):
            throw .decoderFailed(
                source: source, format: format,
                reason: "has no decoder process: \(executable) did not start (\(failure))")
        }
    }

    // MARK: - The child

    /// The version of the parent-child protocol.
    static let protocolVersion = 1
    /// What every child request's marker argument starts with, whatever its version.
    static let childMarkerPrefix = "--netrunner-decoder-child"
    /// The marker argument of this version: `argv[1]` of every child.
    static let childMarker = "\(childMarkerPrefix)=\(protocolVersion)"
    /// Whether this executable has said it serves children (it called ``runChildIfRequested(arguments:)``).
    private static let servesChildren = Atomic<Bool>(false)

    /// The environment variable naming the children's executable when the configuration does not.
    public static let executableEnvironmentVariable = "NETRUNNER_DECODER"

    /// The children's executable: `explicit`, else `$NETRUNNER_DECODER`, else this executable
    /// if it serves children, else `netrunner` beside it, else `netrunner-net` beside it.
    ///
    /// - Parameter explicit: A path chosen by the caller.
    /// - Returns: An executable path.
    /// - Throws: ``ImageError/unreadableFile(path:reason:)`` when none is executable.
    public static func executablePath(_ explicit: String? = nil) throws(ImageError) -> String {
        let named = getenv(executableEnvironmentVariable).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
        if let chosen = explicit ?? named {
            guard DecoderChildProcess.isExecutable(chosen) else {
                throw .unreadableFile(path: chosen, reason: "it is not an executable file")
            }
            return chosen
        }
        let me = DecoderChildProcess.executablePath()
        if servesChildren.load(ordering: .relaxed), let me { return me }
        let folder = me.flatMap { path in path.lastIndex(of: "/").map { String(path[..<$0]) } } ?? "."
        for name in ["netrunner", "netrunner-net"] where DecoderChildProcess.isExecutable(folder + "/" + name) {
            return folder + "/" + name
        }
        throw .unreadableFile(
            path: folder + "/netrunner",
            reason: "no decoder executable: build netrunner, set \(executableEnvironmentVariable), or call "
                + "DecoderIsolation.runChildIfRequested(arguments: CommandLine.arguments) first thing in main")
    }

    /// Runs a decoder child's loop when `arguments` are a child's; returns `nil` at once for
    /// any other arguments.
    ///
    /// Call it first thing in `main`, and exit with the status it returns:
    ///
    ///     if let status = DecoderIsolation.runChildIfRequested(arguments: CommandLine.arguments) {
    ///         exit(status)
    ///     }
    ///
    /// The child sets its limits, then answers requests on stdin/stdout until its parent
    /// closes the socket.
    ///
    /// - Parameter arguments: The process's arguments, `argv[0]` included.
    /// - Returns: `nil` when these are not a child's arguments; else the exit status.
    public static func runChildIfRequested(arguments: [String]) -> Int32? {
        guard arguments.count >= 2, arguments[1].hasPrefix(childMarkerPrefix) else {
            if arguments == CommandLine.arguments { servesChildren.store(true, ordering: .relaxed) }
            return nil
        }
        guard arguments[1] == childMarker, arguments.count == 3, let limit = Int(arguments[2]), limit >= 0 else {
            return 3
        }
        return DecoderWire.serveChild(memoryLimit: limit)
    }
}

extension Duration {
    /// The duration in seconds.
    fileprivate var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
