import FoundationEssentials

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
/// The child is the `netrunner` executable (`netrunner check --in-process MODEL`), found
/// as described in ``checkerPath(_:)``.
public enum ModelCheck {
    /// The outcome of checking one model.
    public enum Verdict: Equatable, Hashable, Sendable {
        /// The model loaded, compiled and ran once.
        case accepted
        /// The model is not usable; the reason says why, as ``InterpreterError`` words it.
        case rejected(String)
        /// The runtime crashed on the model; the text names the signal.
        case crashed(String)
        /// The model did not finish loading and running within the time limit.
        case timedOut(seconds: Double)

        /// Whether the model may be loaded in this process.
        public var isAccepted: Bool { self == .accepted }
    }

    /// The environment variable naming the checker executable, checked first.
    public static let checkerEnvironmentVariable = "NETRUNNER_CHECKER"

    /// Checks the model at `modelPath` in a child process.
    ///
    /// - Parameters:
    ///   - modelPath: The model file to check.
    ///   - options: The options the model will be run with (thread count matters to XNNPACK).
    ///   - timeout: How long the child may take, in seconds, before it is killed.
    ///   - checkerPath: The `netrunner` executable to run; `nil` finds it (see
    ///     ``checkerPath(_:)``).
    /// - Returns: The verdict.
    /// - Throws: ``InterpreterError/tensorFlowLiteError(_:)`` when the runtime is not
    ///   installed or no checker executable can be found or started. The model itself never
    ///   makes this method throw.
    public static func check(
        modelPath: String,
        options: Interpreter.Options? = nil,
        timeout: Double = 60,
        checkerPath: String? = nil
    ) throws -> Verdict {
        // A missing runtime is this process's problem, not the model's: say so here.
        do {
            try Runtime.load()
        } catch {
            throw InterpreterError.tensorFlowLiteError(error.description)
        }
        let executable = try self.checkerPath(checkerPath)
        var arguments = [executable, "check", "--in-process"]
        if let threads = options?.threadCount { arguments += ["--threads", String(threads)] }
        arguments.append(modelPath)
        let result = try ChildProcess.run(arguments, timeout: timeout)
        switch result.termination {
        case .exited(0):
            return .accepted
        case .exited:
            let reason = String(result.output.reversed().drop(while: \.isWhitespace).reversed())
            return .rejected(reason.isEmpty ? "the checker exited with status \(result.termination)" : reason)
        case .signaled(let signal):
            return .crashed(
                "the runtime crashed on \(modelPath) (signal \(signal), \(ChildProcess.signalName(signal)))")
        case .timedOut:
            return .timedOut(seconds: timeout)
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
        var candidates: [String] = []
        if let folder = ChildProcess.executableFolder() { candidates.append(folder + "/netrunner") }
        for folder in (Runtime.environment("PATH") ?? "").split(separator: ":") where !folder.isEmpty {
            candidates.append(folder + "/netrunner")
        }
        if let found = candidates.first(where: ChildProcess.isExecutable) { return found }
        throw InterpreterError.tensorFlowLiteError(
            "no model checker found: build the netrunner executable (swift build) or set \(checkerEnvironmentVariable)."
        )
    }
}
