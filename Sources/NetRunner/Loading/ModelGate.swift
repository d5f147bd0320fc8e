import Dispatch
import FoundationEssentials
import NetRunnerSupport
import Synchronization
import TensorFlowLite

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one gate every model passes before this process first compiles it: a compile-and-run
/// in a child process (``ModelCheck``), its verdict remembered by the model's SHA-256 in the
/// user's cache, so a model that crashes the runtime costs a child process, never the caller.
///
/// LiteRT's verifier lets some corrupt models through that then crash it (a bit-flipped
/// BlazeFace segfaults Python's `ai_edge_litert` too). NetRunner checks what it can in process
/// (``Interpreter`` refuses what the flatbuffer reader and the runtime's verifier catch); since
/// no list of checks is complete, every model also runs once in a child first. The cost is
/// paid once per model per machine: afterwards the verdict is read from
/// `${NETRUNNER_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/netrunner}/model-checks/<sha256>`,
/// and only from there while that folder is the user's alone (``cacheProblem``), from a file of
/// the user's that names the model's digest and the runtime's version.
///
/// ``LoadedModel/makeInterpreter(options:)`` goes through it, so every task, command, the
/// server and the hub do. Trusted code opts out per model (``LoadedModel/trust``) or for the
/// whole process (`NETRUNNER_MODEL_CHECK=off`).
public enum ModelGate {
    /// The environment variable that turns the gate off for the whole process (`off` or `0`).
    public static let environmentVariable = "NETRUNNER_MODEL_CHECK"
    /// The environment variable naming the cache folder (`model-checks/` is made inside it).
    public static let cacheEnvironmentVariable = "NETRUNNER_CACHE_DIR"

    /// What the child found, as remembered: for an accepted model, the memory it took (`nil`
    /// for a verdict remembered from before it was measured).
    private enum Verdict: Equatable {
        case accepted(memoryBytes: Int?)
        case refused(String)
        /// Refused by a check held to `budget` bytes: for its memory, or a crash that may be
        /// an allocation past the child's limited address space. It holds for a budget that
        /// large or smaller; a larger one checks again.
        case refusedWithin(budget: Int, reason: String)
    }

    /// One model's verdict in this process; its lock serialises that model's checks only, so a
    /// slow check of one model never holds up another's.
    private final class Entry: Sendable {
        let verdict = Mutex<Verdict?>(nil)
    }

    /// This process's entries, by digest (the lock is held only to find or add one).
    private static let entries = Mutex<[String: Entry]>([:])

    /// What the gate holds a model to: the most memory it may take and the nice value of its
    /// check, one value a server carries in its configuration and binds around its work
    /// (``policy``), as it binds where its photos decode.
    ///
    ///     let policy = ModelGate.Policy(memoryLimit: 512 << 20, checkNiceness: ModelGate.serverNiceness)
    ///     try await ModelGate.$policy.withValue(policy) { try await server.run() }
    public struct Policy: Sendable, Equatable {
        /// The most memory a model may take when loaded and run, measured in the check process
        /// (``ModelCheck/Report/memoryBytes``), in bytes; `nil` for no limit.
        ///
        /// A tiny file can declare tensors of gigabytes: this refuses it before it is served
        /// (`serve`, `hub serve` and `import` take `--max-model-memory`). Models checked before
        /// memory was measured are checked again once.
        public var memoryLimit: Int?
        /// The nice value model checks run at, 0-19: the check processes
        /// (``ModelCheck/nicenessEnvironmentVariable``), and the hub's validation of an upload
        /// in its own process (on a thread of its own at this value); 0: this process's.
        ///
        /// A server asks for 10 (``serverNiceness``), so that checking uploads runs below
        /// answering requests; the other commands keep 0, so that a person waiting for
        /// `classify` does not wait longer.
        public var checkNiceness: Int32

        /// A policy.
        ///
        /// - Parameters:
        ///   - memoryLimit: The most memory a model may take, in bytes (negative as 0); `nil`
        ///     for none.
        ///   - checkNiceness: The checks' nice value, clamped to 0-19.
        public init(memoryLimit: Int? = nil, checkNiceness: Int32 = 0) {
            self.memoryLimit = memoryLimit.map { max($0, 0) }
            self.checkNiceness = min(max(checkNiceness, 0), 19)
        }
    }

    /// The policy bound around a server's work (its run, its handlers' tasks, its engine's
    /// workers); `nil` where none is: ``current`` is then the process's default
    /// (``memoryLimit`` and ``checkNiceness``).
    @TaskLocal public static var policy: Policy?

    /// The policy a model is admitted under here: the one bound (``policy``), else the
    /// process's default.
    public static var current: Policy {
        policy ?? Policy(memoryLimit: memoryLimit, checkNiceness: checkNiceness)
    }

    /// The process's default ``Policy/memoryLimit``, for work with no ``policy`` bound.
    ///
    /// `nil` (the default) for no limit. The command line's start sets it (`import` and
    /// `check`); a server binds a ``policy`` of its own instead.
    public static var memoryLimit: Int? {
        get { limit.withLock { $0 } }
        set { limit.withLock { $0 = newValue.map { max($0, 0) } } }
    }
    private static let limit = Mutex<Int?>(nil)

    /// The process's default ``Policy/checkNiceness``, for work with no ``policy`` bound: 0
    /// (this process's) unless the command line's start set it.
    public static var checkNiceness: Int32 {
        get { niceness.load(ordering: .relaxed) }
        set { niceness.store(min(max(newValue, 0), 19), ordering: .relaxed) }
    }
    private static let niceness = Atomic<Int32>(0)
    /// The nice value servers ask their checks to run at: below their requests (nice 0).
    public static let serverNiceness: Int32 = 10
    /// The number of child processes this process ran (for tests and the cost measurement).
    public static var checksRun: Int { checkCount.load(ordering: .relaxed) }
    private static let checkCount = Atomic<Int>(0)

    /// The folder verdicts are kept in: `model-checks/` in the user's cache folder
    /// (`$NETRUNNER_CACHE_DIR`, `$XDG_CACHE_HOME/netrunner` or `~/.cache/netrunner`, the home
    /// folder from the password database when HOME is unset; never a folder every user shares).
    ///
    /// Verdicts are read and written there only while it is private (see ``cacheProblem``).
    public static var cacheFolder: String { PrivateFolder.cacheBase + "/model-checks" }

    /// Why verdicts are not kept on disk, or `nil` when they are.
    ///
    /// They are not when the cache folder, or a folder above it, belongs to another user or is writable by other users (checked as ssh checks
    /// `~/.ssh`). A verdict another user could plant would let a crashing model into this
    /// process or keep a good one out, so then every model is checked in a child process in
    /// every run instead, and the gate says so once on standard error.
    public static var cacheProblem: String? { PrivateFolder.prepare(cacheFolder) }

    /// Whether the gate is turned off for this process by ``environmentVariable``.
    public static var isDisabled: Bool {
        guard let value = getenv(environmentVariable).map({ String(cString: $0).lowercased() }) else { return false }
        return value == "off" || value == "0" || value == "false" || value == "no"
    }

    /// Lets a model through, or throws when the runtime crashed or hung on it in a child
    /// process (now, or when it was checked before).
    ///
    /// A model the child merely refused (a clean error) is let through: loading it here
    /// throws that same error without harm.
    ///
    /// - Parameters:
    ///   - model: The model.
    ///   - timeout: Seconds the child may take.
    ///   - policy: What the model is held to (``current`` by default).
    /// - Throws: ``InterpreterError/failedToLoadModel(reason:)`` naming the model when the
    ///   runtime crashed or hung on it; ``InterpreterError/tensorFlowLiteError(_:)`` when no
    ///   checker can run (see ``ModelCheck/checkerPath(_:)``).
    public static func admit(_ model: LoadedModel, timeout: Double = 60, policy: Policy = current) throws {
        guard model.trust == .checked, !isDisabled else { return }
        let digest = model.sha256
        let entry = entries.withLock { entries in
            if let known = entries[digest] { return known }
            let made = Entry()
            entries[digest] = made
            return made
        }
        let limit = policy.memoryLimit
        let budget = limit ?? ModelCheck.defaultMemoryBudget
        try entry.verdict.withLock { known in
            var verdict = known ?? remembered(digest)
            // A verdict from before memory was measured says nothing against a limit, nor one
            // refused under a smaller budget against a larger one: check again.
            var stale = limit != nil && verdict == .accepted(memoryBytes: nil)
            if case .refusedWithin(let checkedBudget, _)? = verdict, checkedBudget < budget { stale = true }
            if verdict == nil || stale {
                verdict = try check(
                    model, digest: digest, timeout: timeout, budget: limit, niceness: policy.checkNiceness)
            }
            known = verdict
            switch verdict {
            case .refused(let reason)?:
                throw InterpreterError.failedToLoadModel(
                    reason: "\(model.modelFile): \(reason); it is not loaded in this process (model SHA-256 \(digest))."
                )
            case .refusedWithin(let checkedBudget, let reason)?:
                // Held to this process's limit, or refused within a larger budget than it (a verdict
                // remembered from a check under a higher limit): either way the limit is why.
                var flag = ""
                if let limit, checkedBudget == limit {
                    flag = ", this process's limit (--max-model-memory)"
                } else if let limit, checkedBudget > limit {
                    flag = ", more than this process's limit of \(mebibytes(limit)) MiB allows (--max-model-memory)"
                }
                throw InterpreterError.failedToLoadModel(
                    reason: "\(model.modelFile): \(reason)\(flag); it is not loaded in this process "
                        + "(model SHA-256 \(digest)).")
            case .accepted(let memory)?:
                if let limit, let memory, memory > limit {
                    throw InterpreterError.failedToLoadModel(
                        reason: "\(model.modelFile) takes \(mebibytes(memory)) MiB of memory when loaded and run once "
                            + "(measured in a check process), more than this process's limit of \(mebibytes(limit)) MiB "
                            + "(--max-model-memory); it is not loaded (model SHA-256 \(digest)).")
                }
            case nil:
                break
            }
        }
    }

    /// Bytes in MiB, rounded up.
    private static func mebibytes(_ bytes: Int) -> Int { (bytes + (1 << 20) - 1) >> 20 }

    /// The most checks that run at once: two, so that one slow check never holds up the rest.
    ///
    /// Each is a process loading the runtime and a model (a few hundred MB, a core); a server or
    /// a test run starting many models at once would otherwise start them all together.
    private static let checkSlots = DispatchSemaphore(value: 2)

    /// Runs the child on the model's bytes (written to a private file) and remembers a final
    /// verdict on disk.
    private static func check(
        _ model: LoadedModel, digest: String, timeout: Double, budget: Int?, niceness: Int32
    ) throws -> Verdict {
        checkSlots.wait()
        defer { checkSlots.signal() }
        let folder = cacheFolder
        let stored = isCacheUsable()
        // The child reads the model from a file in the private cache folder, else in a folder
        // of its own made by mkdtemp (never a predictable name in a shared folder).
        var ownFolder: String?
        if !stored {
            var template = Array("/tmp/netrunner-check-XXXXXX".utf8CString)
            guard let base = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } })
            else {
                throw InterpreterError.tensorFlowLiteError(
                    "cannot check \(model.modelFile) in a child process: no private temporary folder (\(String(cString: strerror(errno)))) (set \(environmentVariable)=off to skip the check for trusted models)"
                )
            }
            ownFolder = String(cString: base)
        }
        let temporary = (ownFolder ?? folder) + "/.pending-\(digest.prefix(16))-\(getpid()).tflite"
        defer {
            unlink(temporary)
            if let ownFolder { rmdir(ownFolder) }
        }
        do {
            try FileIO.writeAtomically(model.modelData, to: temporary)
        } catch {
            throw InterpreterError.tensorFlowLiteError(
                "cannot check \(model.modelFile) in a child process: \(error) (set \(environmentVariable)=off to skip the check for trusted models)"
            )
        }
        checkCount.add(1, ordering: .relaxed)
        let verdict: Verdict
        let report = try ModelCheck.report(
            modelPath: temporary, timeout: timeout, memoryBudget: budget, niceness: niceness)
        let checkedBudget = report.memoryBudget ?? budget ?? ModelCheck.defaultMemoryBudget
        switch report.verdict {
        case .accepted:
            verdict = .accepted(memoryBytes: report.memoryBytes)
        case .rejected(let reason) where report.isOverBudget:
            // Its file's name is the temporary one: say what it declares or needs without it.
            let words = reason.replacing(temporary + " ", with: "").replacing(temporary, with: "the model")
            verdict = .refusedWithin(budget: checkedBudget, reason: words)
        case .rejected:
            // Refused cleanly by the runtime: loading it here throws the same error, harmlessly.
            verdict = .accepted(memoryBytes: 0)
        case .crashed(let reason):
            let signal = reason.firstIndex(of: "(").map { String(reason[$0...]) } ?? ""
            let words = "the runtime crashed on this model in a check process \(signal)"
            // A segfault is the model's; an abort, a trap or a sanitizer's exit may be an
            // allocation past the child's limited address space, which a larger budget may pass.
            let isFault = reason.contains("SIGSEGV") || reason.contains("SIGBUS")
            verdict =
                isFault
                ? .refused(words)
                : .refusedWithin(budget: checkedBudget, reason: words + " held to \(mebibytes(checkedBudget)) MiB")
        case .timedOut(let seconds):
            verdict = .refused(
                "the runtime did not finish loading and running it within \(seconds) s of processor time in a check process"
            )
        }
        if stored {
            let text: String
            switch verdict {
            case .accepted(let memory?): text = "accepted memory \(memory)\n"
            case .accepted(nil): text = "accepted\n"
            case .refused(let reason): text = "refused " + reason + "\n"
            case .refusedWithin(let budget, let reason): text = "refused within \(budget) " + reason + "\n"
            }
            try? FileIO.writeAtomically(Data((verdictHeader(digest) + text).utf8), to: folder + "/" + digest)
        }
        return verdict
    }

    /// The lines a verdict file starts with: it holds for these bytes on this runtime only.
    private static func verdictHeader(_ digest: String) -> String {
        "netrunner model check\nsha256 \(digest)\nruntime LiteRT \(Runtime.version)\n"
    }

    /// Whether verdicts are kept on disk; says once on standard error why not.
    private static func isCacheUsable() -> Bool {
        let problem = cacheProblem
        if let problem, !cacheNoticeGiven.exchange(true, ordering: .relaxed) {
            let line =
                "netrunner: model-check verdicts are not kept: \(problem); every model is checked in a child process each run (set \(cacheEnvironmentVariable) to a folder of your own).\n"
            _ = Array(line.utf8).withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
        }
        return problem == nil
    }
    private static let cacheNoticeGiven = Atomic<Bool>(false)

    /// A verdict remembered on disk, if any: only from the user's own file in a private cache
    /// folder, for these bytes and this runtime (anything else is ignored and checked again).
    private static func remembered(_ digest: String) -> Verdict? {
        guard isCacheUsable(),
            let data = PrivateFolder.ownFileContents(cacheFolder + "/" + digest, maximumSize: 65_536)
        else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        let header = verdictHeader(digest)
        guard text.hasPrefix(header) else { return nil }
        let verdict = String(text.dropFirst(header.count)).trimmingWhitespace()
        if verdict == "accepted" { return .accepted(memoryBytes: nil) }
        if verdict.hasPrefix("accepted memory "), let memory = Int(verdict.dropFirst(16)), memory >= 0 {
            return .accepted(memoryBytes: memory)
        }
        if verdict.hasPrefix("refused within ") {
            let rest = verdict.dropFirst(15)
            guard let space = rest.firstIndex(of: " "), let budget = Int(rest[..<space]), budget >= 0 else {
                return nil
            }
            return .refusedWithin(budget: budget, reason: String(rest[rest.index(after: space)...]))
        }
        if verdict.hasPrefix("refused ") { return .refused(String(verdict.dropFirst(8))) }
        return nil
    }
}
