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
/// file; a crafted HEIC once crashed `serve` inside it. A server binds its pool, in a
/// ``DecodingEnvironment``, around the work it does (the command line's start sets the process's
/// default, ``ImageDecoder/isolation``, to a pool of its own):
///
///     let environment = DecodingEnvironment(isolation: DecoderIsolation(.init(children: 2)))
///     try await ImageDecoder.$environment.withValue(environment) { try await server.run() }
///
/// ``ImageDecoder`` then hands every file of ``Configuration/formats`` (by default the formats
/// ``ImageFormat/decodedInChild`` marks in the table: HEIC and AVIF) to a child, which decodes it
/// with the same options and sends the pixels back over a socket; every other format, and every
/// decode of an environment without isolation, stays in process. A
/// child is an executable that calls ``runChildIfRequested(arguments:)`` first thing in `main`
/// (`netrunner` and `netrunner-net` do); it runs with an address-space limit
/// (``Configuration/memoryLimit``) and no core dumps, and serves one decode at a time. On Linux
/// it first loads libheif's plugins, then confines itself with a seccomp filter (no file opened, no socket, no process started, no new code mapped;
/// docs/library.md lists the calls it keeps) before it reads the first byte of a file, and says
/// so in its first message; a child without that sandbox is not used unless
/// ``Configuration/requiresSandbox`` is off. A child is retired after any anomaly (a crash, a deadline,
/// an answer the parent does not believe, and the decoder's own error or refusal, after which
/// its heap is not trusted) and after ``Configuration/decodesPerChild`` decodes. The parent
/// reads the file's declared geometry itself and holds the child's answer to it
/// (storedSize, full size, region, scale, orientation, byte count); a decode's deadline grows with
/// the pixels the file declares, between ``Configuration/minimumTimeout`` and
/// ``Configuration/timeout``. A server awaits its decodes with ``decode(data:format:options:source:)-(_,_,_,String)async``,
/// which holds no thread of the caller's while a child works.
public final class DecoderIsolation: Sendable {
    /// How the pool runs its children.
    public struct Configuration: Sendable {
        /// The executable the children run: `nil` finds it as ``executablePath(_:)`` says.
        public var executable: String?
        /// The most children, and so the most decodes at once (callers beyond wait).
        public var children: Int
        /// Each child's address-space limit in bytes (`RLIMIT_AS`); 0 for none.
        public var memoryLimit: Int
        /// How long one decode may take at most, the child's start included (the deadline of a
        /// file whose size is not known, and the cap of every other's).
        public var timeout: Duration
        /// How long any decode may take: the deadline of a small file.
        public var minimumTimeout: Duration = .seconds(10)
        /// How much longer a decode may take per million pixels the file declares.
        public var timePerMegapixel: Duration = .milliseconds(500)
        /// The most decodes one child serves before it is retired (its heap renewed).
        public var decodesPerChild = 64
        /// The formats decoded in children (by default ``ImageFormat/decodedInChildren``).
        public var formats: Set<ImageFormat>
        /// More environment for the children (tests use it to inject faults).
        package var environment: [String: String] = [:]
        /// Whether a child that could not install its sandbox (a kernel without seccomp) is
        /// refused, each decode then failing with ``ImageError/decoderFailed(source:format:reason:)``.
        ///
        /// On by default on Linux unless `NETRUNNER_DECODER_UNSANDBOXED=1`
        /// (``unsandboxedEnvironmentVariable``), where the operator accepts decoding without
        /// it; off elsewhere, where there is no seccomp.
        public var requiresSandbox = Configuration.requiresSandboxByDefault

        /// The environment variable with which the operator allows children without a sandbox.
        public static let unsandboxedEnvironmentVariable = "NETRUNNER_DECODER_UNSANDBOXED"

        private static var requiresSandboxByDefault: Bool {
            #if os(Linux)
                getenv(unsandboxedEnvironmentVariable).map { String(cString: $0) } != "1"
            #else
                false
            #endif
        }

        /// The default ``memoryLimit``: 3 GiB of address space, room for a 100-megapixel HEIC
        /// (its YCbCr planes, libheif's RGB image and the copy sent back) besides the runtime.
        public static let defaultMemoryLimit = 3 << 30

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - children: The most children (at least 1).
        ///   - memoryLimit: Each child's address-space limit in bytes; 0 for none.
        ///   - timeout: How long one decode may take.
        ///   - formats: The formats decoded in children: by default those the table of
        ///     ``ImageFormat`` marks ``ImageFormat/decodedInChild`` (HEIC and AVIF).
        ///   - executable: The children's executable, `nil` to find it.
        public init(
            children: Int, memoryLimit: Int = Configuration.defaultMemoryLimit, timeout: Duration = .seconds(60),
            formats: Set<ImageFormat> = ImageFormat.decodedInChildren, executable: String? = nil
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
        /// Children ended by the parent without a crash: after a decoder error or a refusal, an
        /// answer it did not believe, or their last decode of ``Configuration/decodesPerChild``.
        public var retired = 0
        /// Children that said their sandbox is in place.
        public var sandboxed = 0
        /// Children that said they have none (used only where ``Configuration/requiresSandbox``
        /// is off).
        public var unsandboxed = 0
    }

    /// The configuration.
    public let configuration: Configuration
    /// The children waiting for a decode, with the decodes each has served.
    private let idle = Mutex<[(child: DecoderChildProcess, decodes: Int)]>([])
    /// The children lent out, at most ``Configuration/children`` at once.
    private let slots: DecoderSlots
    /// Where ``decode(data:format:options:source:)-(_,_,_,String)async`` waits on its child:
    /// threads of the pool's own, never the caller's.
    private let exchanges = DispatchQueue(label: "netrunner.decoder-children", attributes: .concurrent)
    private let counts = Mutex(Statistics())
    /// Why children are refused, once one said it has no sandbox (and one was required); and
    /// whether running without one was reported.
    private let sandboxRefusal = Mutex<String?>(nil)
    private let reportedUnsandboxed = Atomic<Bool>(false)

    /// Creates a pool; no child starts before the first decode.
    ///
    /// - Parameter configuration: How to run the children.
    public init(_ configuration: Configuration) {
        self.configuration = configuration
        self.slots = DecoderSlots(count: configuration.children)
    }

    deinit {
        for (child, _) in idle.withLock({ $0 }) { child.end() }
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
        slots.acquireBlocking()
        defer { slots.release() }
        return try exchange(data: data, format: format, options: options, source: source)
    }

    /// Decodes `data` in a child as ``decode(data:format:options:source:)-(_,_,_,String)`` does,
    /// suspending the caller (its thread free for other work) while it waits for a child and
    /// while the child decodes.
    ///
    /// - Parameters:
    ///   - data: The encoded image.
    ///   - format: Its format, as sniffed.
    ///   - options: How to decode.
    ///   - source: The name errors use.
    /// - Returns: The decoded image.
    /// - Throws: As the synchronous decode.
    public func decode(data: Data, format: ImageFormat, options: DecodingOptions, source: String)
        async throws(ImageError) -> DecodedImage
    {
        await slots.acquire()
        let result = await withCheckedContinuation {
            (done: CheckedContinuation<Result<DecodedImage, ImageError>, Never>) in
            exchanges.async {
                let result = Result { () throws(ImageError) -> DecodedImage in
                    try self.exchange(data: data, format: format, options: options, source: source)
                }
                self.slots.release()
                done.resume(returning: result)
            }
        }
        return try result.get()
    }

    /// How long a decode of a file declaring `geometry` may take, in seconds.
    func timeout(for geometry: HEIFDeclaredGeometry?) -> Double {
        let cap = configuration.timeout.seconds
        guard let geometry else { return cap }
        let megapixels = Double(geometry.coded.width) * Double(geometry.coded.height) / 1e6
        let wanted = configuration.minimumTimeout.seconds + megapixels * configuration.timePerMegapixel.seconds
        return min(cap, max(configuration.minimumTimeout.seconds, wanted))
    }

    /// One decode on a child the caller holds a slot for.
    private func exchange(data: Data, format: ImageFormat, options: DecodingOptions, source: String) throws(ImageError)
        -> DecodedImage
    {
        let declared = HEIFDeclaredGeometry(data)
        let seconds = timeout(for: declared)
        let deadline = DecoderChildProcess.now() + seconds
        let child: DecoderChildProcess
        let served: Int
        if let reused = idle.withLock({ $0.popLast() }) {
            (child, served) = reused
        } else {
            (child, served) = (try start(format: format, source: source, deadline: deadline), 0)
        }
        let request = DecoderWire.request(data: data, options: options, source: source)
        let outcome = DecoderWire.exchange(
            request, with: child, deadline: deadline, maximumPixelCount: options.maximumPixelCount)
        switch outcome {
        case .answer(.success(let image)):
            if let problem = DecoderWire.problem(with: image, format: format, options: options, declared: declared) {
                child.end(grace: 0)
                counts.withLock { $0.retired += 1 }
                throw .decoderFailed(
                    source: source, format: format,
                    reason: "sent back \(problem) from its decoder process, which was stopped")
            }
            counts.withLock { $0.decodes += 1 }
            if served + 1 < configuration.decodesPerChild {
                idle.withLock { $0.append((child, served + 1)) }
            } else {
                child.end()
                counts.withLock { $0.retired += 1 }
            }
            return image
        case .answer(.failure(let error)):
            // The decoder's own error or refusal: the answer stands, the child's heap is not trusted.
            child.end()
            counts.withLock {
                $0.decodes += 1
                $0.retired += 1
            }
            throw error
        case .failed(let failure):
            let ending = child.end(grace: failure == .timedOut ? 0 : 0.5)
            let reason: String
            switch failure {
            case .timedOut:
                counts.withLock { $0.timeouts += 1 }
                reason =
                    "took longer than \(Int(seconds.rounded())) seconds (for its declared size) in its decoder "
                    + "process, which was stopped"
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

    /// Starts a child and reads its hello before `deadline`.
    private func start(format: ImageFormat, source: String, deadline: Double) throws(ImageError)
        -> DecoderChildProcess
    {
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
        if let refusal = sandboxRefusal.withLock({ $0 }) {
            throw .decoderFailed(source: source, format: format, reason: refusal)
        }
        let arguments = [executable, Self.childMarker, String(configuration.memoryLimit)]
        let child: DecoderChildProcess
        switch DecoderChildProcess.spawn(arguments, environment: environment) {
        case .success(let started):
            counts.withLock { $0.childrenStarted += 1 }
            child = started
        case .failure(let failure):
            throw .decoderFailed(
                source: source, format: format,
                reason: "has no decoder process: \(executable) did not start (\(failure))")
        }
        switch DecoderWire.hello(from: child, deadline: deadline) {
        case .success(let hello) where hello.state == .installed:
            counts.withLock { $0.sandboxed += 1 }
            return child
        case .success(let hello):
            guard configuration.requiresSandbox else {
                counts.withLock { $0.unsandboxed += 1 }
                if hello.state == .failed, !reportedUnsandboxed.exchange(true, ordering: .relaxed) {
                    let line = Array("netrunner: decoder processes run without a sandbox: \(hello.detail)\n".utf8)
                    _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
                }
                return child
            }
            child.end(grace: 0)
            let refusal =
                "has no sandboxed decoder process (\(hello.detail)); "
                + "\(Configuration.unsandboxedEnvironmentVariable)=1 allows decoding without one"
            sandboxRefusal.withLock { $0 = refusal }
            throw .decoderFailed(source: source, format: format, reason: refusal)
        case .failure(let failure):
            let ending = child.end(grace: failure == .timedOut ? 0 : 0.5)
            counts.withLock { $0.crashes += 1 }
            throw .decoderFailed(
                source: source, format: format,
                reason: "has no decoder process: \(executable) did not start (\(failure), \(ending.description))")
        }
    }

    // MARK: - The child

    /// The version of the parent-child protocol.
    static let protocolVersion = 2
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
