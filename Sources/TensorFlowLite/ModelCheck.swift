import FoundationEssentials
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Checks a model from an untrusted source in a child process before this process loads it.
///
/// LiteRT verifies a model's flatbuffer, but a crafted or corrupted file can still pass the
/// verifier and crash the runtime while it compiles (measured: 2 of 1,800 bit-flipped files
/// aborted inside `LiteRtCreateCompiledModel`). ``check(modelPath:options:timeout:checkerPath:)``
/// loads the model, allocates its tensors and runs it once on zeroed inputs in a separate
/// process, so a crash or a hang there costs that process only:
///
///     switch try ModelCheck.check(modelPath: upload) {
///     case .accepted: interpreter = try Interpreter(modelPath: upload)
///     case .rejected(let reason), .crashed(let reason): print("refused: \(reason)")
///     case .timedOut: print("refused: the model hangs the runtime")
///     }
///
/// Both ends of the conversation between parent and child live here. The child is an
/// executable that calls ``runChildIfRequested(arguments:)`` first thing in its `main`, before
/// it parses its own arguments; `netrunner` does, and any other program that does can serve
/// as the checker too. It is found as described in ``checkerPath(_:)``.
public enum ModelCheck {
    /// The outcome of checking one model.
    public enum Verdict: Equatable, Hashable, Sendable {
        /// The model loaded, compiled and ran once.
        case accepted
        /// The model is not usable; the reason says why, as ``InterpreterError`` words it.
        case rejected(String)
        /// The runtime crashed on the model; the text names the signal (or the exit status of a
        /// child that ended outside the protocol, as a sanitizer's report does).
        case crashed(String)
        /// The model did not finish loading and running within the time limit (of processor
        /// time on Linux; see ``report(modelPath:options:timeout:checkerPath:memoryBudget:niceness:)``).
        case timedOut(seconds: Double)

        /// Whether the model may be loaded in this process.
        public var isAccepted: Bool { self == .accepted }
    }

    /// What a check found: the verdict and, for a model that ran, the memory it took.
    public struct Report: Equatable, Hashable, Sendable {
        /// The verdict.
        public var verdict: Verdict
        /// For an accepted model, what serving it costs a worker, in bytes.
        ///
        /// The memory the check process grew by while it loaded the model, allocated its
        /// tensors and ran it once: its peak resident set, less what it held with the runtime
        /// loaded and no model. `nil` for other verdicts, or when the checker did not say.
        public var memoryBytes: Int?
        /// Whether the model was rejected for memory.
        ///
        /// Its file declares more tensor bytes than the check's budget, or the child could not
        /// allocate its tensors within its limited address space. Unlike another rejection,
        /// loading such a model elsewhere would not fail harmlessly: it would allocate what the
        /// check refused.
        public var isOverBudget: Bool
        /// The budget the check held the model to, in bytes (see
        /// ``report(modelPath:options:timeout:checkerPath:memoryBudget:)``).
        public var memoryBudget: Int?
        /// For an accepted model, the nice value the check process ran at, as it reported it
        /// (`nil` for other verdicts, or a checker that did not say).
        public var niceness: Int32?

        /// Creates a report.
        ///
        /// - Parameters:
        ///   - verdict: The verdict.
        ///   - memoryBytes: The memory measured, for an accepted model.
        ///   - isOverBudget: Whether the model was rejected for memory.
        ///   - memoryBudget: The budget the check held the model to.
        ///   - niceness: The nice value the check process reported.
        public init(
            verdict: Verdict, memoryBytes: Int? = nil, isOverBudget: Bool = false, memoryBudget: Int? = nil,
            niceness: Int32? = nil
        ) {
            self.verdict = verdict
            self.memoryBytes = memoryBytes
            self.isOverBudget = isOverBudget
            self.memoryBudget = memoryBudget
            self.niceness = niceness
        }
    }

    /// The environment variable naming the checker executable, checked first.
    public static let checkerEnvironmentVariable = "NETRUNNER_CHECKER"

    // MARK: - The child's protocol

    /// The version of the parent-child protocol; a child refuses any other.
    static let protocolVersion = 3

    /// What every checker request's marker argument starts with, whatever its version.
    static let childMarkerPrefix = "--netrunner-model-check-child"

    /// The marker argument of this version's requests: `argv[1]` of every checker child.
    static let childMarker = "\(childMarkerPrefix)=\(protocolVersion)"

    /// The exit statuses of a checker child.
    ///
    /// With the text the child writes on stdout, they are all it tells its parent; a crash or
    /// a hang shows in how the child ends, not in a status. Defined here only.
    enum ChildStatus {
        /// The model loaded, compiled and ran once; stdout holds `memory BYTES nice N`.
        static let accepted: Int32 = 0
        /// The model was refused; stdout holds the reason.
        static let rejected: Int32 = 2
        /// The child did not understand the request (another protocol version, or a
        /// malformed argument vector); stdout says why.
        static let unsupportedRequest: Int32 = 3
        /// The runtime could not allocate the model's tensors within the child's limited
        /// address space; stdout says so.
        static let overBudget: Int32 = 4
    }

    /// The argument vector of a checker child, `argv[0]` included.
    ///
    /// It is `[executable, marker, threads, budget, modelPath]`, the thread count and the
    /// memory budget in bytes in decimal.
    static func childArguments(
        executable: String, modelPath: String, options: Interpreter.Options?, budget: Int = defaultMemoryBudget
    ) -> [String] {
        [executable, childMarker, String(options?.threadCount ?? 1), String(budget), modelPath]
    }

    /// Checks the model at `modelPath` in a child process.
    ///
    /// - Parameters:
    ///   - modelPath: The model file to check.
    ///   - options: The options the model will be run with (thread count matters to XNNPACK).
    ///   - timeout: How long the child may take, in seconds, before it is killed.
    ///   - checkerPath: The checker executable to run (`netrunner`, or any program that
    ///     calls ``runChildIfRequested(arguments:)``); `nil` finds it (see
    ///     ``checkerPath(_:)``).
    /// - Returns: The verdict.
    /// - Throws: ``InterpreterError/tensorFlowLiteError(_:)`` when the runtime is not
    ///   installed, no checker executable can be found or started, or the checker does not
    ///   understand the request. The model itself never makes this method throw.
    public static func check(
        modelPath: String,
        options: Interpreter.Options? = nil,
        timeout: Double = 60,
        checkerPath: String? = nil
    ) throws -> Verdict {
        try report(modelPath: modelPath, options: options, timeout: timeout, checkerPath: checkerPath).verdict
    }

    /// Checks the model at `modelPath` in a child process, as
    /// ``check(modelPath:options:timeout:checkerPath:)`` does, and reports the memory it took.
    ///
    /// The model is held to `memoryBudget`: one whose file declares more bytes of tensors is
    /// rejected before any child starts, and the child's address space is limited to the
    /// budget plus the runtime's own needs, so an allocation past it fails there
    /// (``Report/isOverBudget``). See ``defaultMemoryBudget``.
    ///
    /// On Linux `timeout` counts the child's processor time, not the time on the clock: a
    /// child at a high `niceness` on a busy machine (a server's flood of uploads, other
    /// builds) waits for the processor without coming nearer its limit, so load never turns
    /// a good model into a timed-out one (a verdict the model gate remembers). A child that
    /// sleeps instead (a deadlock) is ended after three times `timeout` plus 10 s on the
    /// clock. Elsewhere `timeout` is time on the clock.
    ///
    /// - Parameters:
    ///   - modelPath: The model file to check.
    ///   - options: The options the model will be run with.
    ///   - timeout: How long the child may take, in seconds, before it is killed.
    ///   - checkerPath: The checker executable to run; `nil` finds it.
    ///   - memoryBudget: The most bytes of tensors the model may take; `nil`: the machine's
    ///     physical memory (``defaultMemoryBudget``).
    ///   - niceness: The nice value the child runs at, 0-19 (see
    ///     ``nicenessEnvironmentVariable``); 0: this process's. A server asks for 10, so that
    ///     its checks run below its requests.
    /// - Returns: The verdict and, for an accepted model, its memory.
    /// - Throws: As ``check(modelPath:options:timeout:checkerPath:)``.
    public static func report(
        modelPath: String,
        options: Interpreter.Options? = nil,
        timeout: Double = 60,
        checkerPath: String? = nil,
        memoryBudget: Int? = nil,
        niceness: Int32 = 0
    ) throws -> Report {
        // A missing runtime is this process's problem, not the model's: say so here.
        do {
            try Runtime.load()
        } catch {
            throw InterpreterError.tensorFlowLiteError(error.description)
        }
        let executable = try self.checkerPath(checkerPath)
        let budget = max(memoryBudget ?? defaultMemoryBudget, 0)
        // Before anything is allocated: what the file declares.
        if let refusal = declaredTensorRefusal(modelPath: modelPath, budget: budget, budgetGiven: memoryBudget != nil) {
            return Report(verdict: .rejected(refusal), isOverBudget: true, memoryBudget: budget)
        }
        let arguments = childArguments(executable: executable, modelPath: modelPath, options: options, budget: budget)
        let result = try ChildProcess.run(
            arguments, timeout: timeout, environment: nicenessEnvironment(niceness))
        let reason = String(result.output.reversed().drop(while: \.isWhitespace).reversed())
        switch result.termination {
        case .exited(ChildStatus.accepted):
            let answer = parseAcceptedAnswer(reason)
            return Report(
                verdict: .accepted, memoryBytes: answer.memory, memoryBudget: budget, niceness: answer.niceness)
        case .exited(ChildStatus.overBudget):
            return Report(
                verdict: .rejected(
                    reason.isEmpty
                        ? "the runtime could not allocate the model's tensors within the check's budget" : reason
                ), isOverBudget: true, memoryBudget: budget)
        case .exited(ChildStatus.unsupportedRequest):
            throw InterpreterError.tensorFlowLiteError(
                "the model checker \(executable) cannot run this check: "
                    + (reason.isEmpty ? "it does not speak model check protocol \(protocolVersion)." : reason))
        case .exited(ChildStatus.rejected):
            return Report(
                verdict: .rejected(reason.isEmpty ? "the checker refused the model without a reason" : reason),
                memoryBudget: budget)
        case .exited(64):
            // EX_USAGE: a checker that does not know the request at all (built before the protocol).
            throw InterpreterError.tensorFlowLiteError(
                "the model checker \(executable) cannot run this check: it does not know the request (exit status 64)")
        case .exited(let status):
            // Not one of the protocol's statuses: the child died on its own (exit() from inside
            // the runtime, a sanitizer's report): the model is not safe to load here.
            return Report(
                verdict: .crashed(
                    "the runtime ended the check of \(modelPath) without a verdict (exit status \(status))"),
                memoryBudget: budget)
        case .signaled(let signal):
            // Also how an allocation past the child's address space can end (an uncaught
            // `std::bad_alloc`, a Swift allocation trap): ``Report/memoryBudget`` says under what.
            return Report(
                verdict: .crashed(
                    "the runtime crashed on \(modelPath) (signal \(signal), \(ChildProcess.signalName(signal)))"),
                memoryBudget: budget)
        case .timedOut:
            return Report(verdict: .timedOut(seconds: timeout), memoryBudget: budget)
        }
    }

    /// Runs the checker's side of ``check(modelPath:options:timeout:checkerPath:)`` when
    /// `arguments` are a checker request; returns `nil` at once for any other arguments.
    ///
    /// Call it first thing in the checker executable's `main`, before parsing arguments, and
    /// exit with the status it returns:
    ///
    ///     if let status = ModelCheck.runChildIfRequested(arguments: CommandLine.arguments) {
    ///         exit(status)
    ///     }
    ///
    /// A request is an argument vector whose second element is the private marker
    /// ``check(modelPath:options:timeout:checkerPath:)`` puts there; no command line a
    /// person types starts that way. For a request, this runs ``runInProcess(modelPath:options:)``
    /// and writes the reason of a refusal on stdout, where the parent reads it.
    ///
    /// - Parameter arguments: The process's arguments, `argv[0]` included.
    /// - Returns: `nil` when `arguments` are not a checker request; otherwise the exit status
    ///   the parent expects.
    ///
    /// A program that calls this first thing with `CommandLine.arguments` is itself a checker:
    /// when no other is named, the running executable serves its own checks (so a library
    /// user's program needs no `netrunner` beside it).
    public static func runChildIfRequested(arguments: [String]) -> Int32? {
        let status = runChild(arguments: arguments, inChildProcess: true, report: writeToStandardOutput)
        // Called with the process's own arguments (from `main`), the executable is a checker.
        if status == nil, arguments == CommandLine.arguments { servesItsOwnChecks.store(true, ordering: .relaxed) }
        return status
    }

    /// Whether this process's executable answers checker requests (it called
    /// ``runChildIfRequested(arguments:)`` at start).
    static let servesItsOwnChecks = Atomic<Bool>(false)

    /// ``runChildIfRequested(arguments:)`` with the reason handed to `report`; the priority
    /// is lowered and the address space limited only `inChildProcess` (a checker process, not
    /// a test's).
    static func runChild(arguments: [String], inChildProcess: Bool = false, report: (String) -> Void) -> Int32? {
        guard arguments.count > 1, arguments[1].hasPrefix(childMarkerPrefix) else { return nil }
        guard arguments[1] == childMarker, arguments.count == 5, let threads = Int(arguments[2]),
            let budget = Int(arguments[3]), budget >= 0
        else {
            report(
                "this checker speaks model check protocol \(protocolVersion) (\(childMarker) THREADS BUDGET MODEL), "
                    + "not \(arguments.dropFirst().joined(separator: " ")).")
            return ChildStatus.unsupportedRequest
        }
        // Before the runtime is loaded and any thread starts: they inherit it.
        let niceness = inChildProcess ? lowerOwnPriority() : currentNiceness()
        let modelPath = arguments[4]
        var options = Interpreter.Options()
        options.threadCount = threads
        var addressSpace: Int?
        do {
            // What the process holds with the runtime loaded and no model, then its peak.
            try Runtime.load()
            let baseline = residentBytes()
            // Before the model is read: an allocation past the budget fails here, not in the parent.
            if inChildProcess {
                addressSpace = limitAddressSpace(budget: budget, threads: threads, modelPath: modelPath)
            }
            try runInProcess(modelPath: modelPath, options: options)
            report("memory \(max(peakResidentBytes() - baseline, 0)) nice \(niceness)")
            return ChildStatus.accepted
        } catch InterpreterError.failedToAllocateTensors where addressSpace != nil {
            report(
                "the runtime could not allocate the tensors of \(modelPath) within the check's budget of "
                    + "\(describe(budget)) (\(describe(addressSpace ?? 0)) of address space in all)")
            return ChildStatus.overBudget
        } catch {
            report("\(error)")
            return ChildStatus.rejected
        }
    }

    /// The largest resident set this program has had, in bytes.
    ///
    /// On Linux `VmHWM` of `/proc/self/status`, the high-water mark of this program's own
    /// memory map: `getrusage`'s `ru_maxrss` would also count the parent's, which a spawned
    /// child inherits across `exec` (a checker started by a 300 MB server would report 300 MB
    /// for any model).
    static func peakResidentBytes() -> Int {
        #if os(Linux)
            let file = open("/proc/self/status", O_RDONLY)
            guard file >= 0 else { return 0 }
            defer { close(file) }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
            guard count > 0 else { return 0 }
            for line in String(decoding: buffer[0..<count], as: UTF8.self).split(separator: "\n")
            where line.hasPrefix("VmHWM:") {
                let digits = line.dropFirst(6).filter(\.isNumber)
                return (Int(digits) ?? 0) * 1024  // kB
            }
            return 0
        #else
            var usage = rusage()
            getrusage(RUSAGE_SELF, &usage)
            return Int(usage.ru_maxrss)  // bytes on macOS
        #endif
    }

    /// The process's resident set now, in bytes (`/proc/self/statm`; 0 where there is none).
    static func residentBytes() -> Int {
        #if os(Linux)
            let file = open("/proc/self/statm", O_RDONLY)
            guard file >= 0 else { return 0 }
            defer { close(file) }
            var buffer = [UInt8](repeating: 0, count: 256)
            let count = buffer.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
            guard count > 0 else { return 0 }
            let fields = String(decoding: buffer[0..<count], as: UTF8.self).split(separator: " ")
            guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
            return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        #else
            return 0
        #endif
    }

    /// Writes `text` and a newline to file descriptor 1, unbuffered (the child exits next).
    private static func writeToStandardOutput(_ text: String) {
        var line = text + "\n"
        line.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(STDOUT_FILENO, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }

    /// What the checker does in its own process: load the model, allocate its tensors, fill
    /// the inputs with zeros, run it once and read every output.
    ///
    /// - Parameters:
    ///   - modelPath: The model file.
    ///   - options: Interpreter options.
    /// - Throws: Whatever the ``Interpreter`` throws for this model.
    public static func runInProcess(modelPath: String, options: Interpreter.Options? = nil) throws {
        let interpreter = try Interpreter(modelPath: modelPath, options: options)
        try interpreter.allocateTensors()
        for index in 0..<interpreter.inputTensorCount {
            let input = try interpreter.input(at: index)
            try interpreter.copy(Data(count: input.data.count), toInputAt: index)
        }
        try interpreter.invoke()
        for index in 0..<interpreter.outputTensorCount {
            _ = try interpreter.output(at: index)
        }
    }

    /// The checker executable: `explicit` if given, else the file named by
    /// `NETRUNNER_CHECKER`, else `netrunner` beside the running executable, else `netrunner`
    /// on `PATH`.
    ///
    /// An explicit choice (the argument or the environment variable) is not second-guessed:
    /// if it is not an executable file, this throws rather than run another checker.
    ///
    /// - Parameter explicit: A path chosen by the caller.
    /// - Returns: An executable path.
    /// - Throws: ``InterpreterError/tensorFlowLiteError(_:)`` when the explicit choice is not
    ///   executable, or when no checker is found.
    public static func checkerPath(_ explicit: String? = nil) throws -> String {
        let named = Runtime.environment(checkerEnvironmentVariable).flatMap { $0.isEmpty ? nil : $0 }
        if let chosen = explicit ?? named {
            guard ChildProcess.isExecutable(chosen) else {
                let source = explicit != nil ? "the checker path given" : checkerEnvironmentVariable
                throw InterpreterError.tensorFlowLiteError(
                    "no model checker at \(chosen) (\(source)): it does not exist or is not executable.")
            }
            return chosen
        }
        if servesItsOwnChecks.load(ordering: .relaxed), let executable = ChildProcess.executablePath() {
            return executable
        }
        var candidates: [String] = []
        if let folder = ChildProcess.executableFolder() { candidates.append(folder + "/netrunner") }
        for folder in (Runtime.environment("PATH") ?? "").split(separator: ":") where !folder.isEmpty {
            candidates.append(folder + "/netrunner")
        }
        if let found = candidates.first(where: ChildProcess.isExecutable) { return found }
        throw InterpreterError.tensorFlowLiteError(
            "no model checker found: build the netrunner executable (swift build), set \(checkerEnvironmentVariable), "
                + "or call ModelCheck.runChildIfRequested(arguments: CommandLine.arguments) first thing in main."
        )
    }
}
