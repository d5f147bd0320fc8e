import ArgumentParser
import NetRunner
import TensorFlowLite

/// The options of the commands that run one interpreter (`bench`, `check`, `run`): the threads
/// inside it, and the runtime's log.
struct RuntimeOptions: ParsableArguments {
    @Option(
        name: .customLong("runtime-threads"), parsing: .unconditional,
        help:
            "Threads inside the interpreter: the runtime's (XNNPACK's) CPU threads (default: 1). Not --threads, which in classify, detect and bulk counts interpreters side by side."
    )
    var runtimeThreads: Int?

    /// The old spelling, still accepted: in these commands it always meant the threads inside
    /// the interpreter.
    @Option(name: [.customShort("t"), .customLong("threads")], parsing: .unconditional, help: .hidden)
    var legacyThreads: Int?

    @Flag(name: .long, help: "Show the runtime's own log lines on stderr.")
    var verbose = false

    func validate() throws {
        if let runtimeThreads { try OptionLimits.checkThreads(runtimeThreads, flag: "--runtime-threads") }
        if let legacyThreads { try OptionLimits.checkThreads(legacyThreads) }
        if runtimeThreads != nil, legacyThreads != nil {
            throw ValidationError("--runtime-threads and --threads (its old name) cannot be used together.")
        }
    }

    /// The threads inside the interpreter: `--runtime-threads` (or `--threads`), else 1.
    var threads: Int { runtimeThreads ?? legacyThreads ?? 1 }

    /// The interpreter options these flags describe.
    var interpreterOptions: Interpreter.Options {
        var options = Interpreter.Options()
        options.threadCount = threads
        options.isErrorLoggingEnabled = verbose
        return options
    }

    /// The task base options these flags describe, on an accelerator.
    ///
    /// - Parameter accelerator: What the model runs on (`--accelerator`).
    /// - Returns: The base options.
    func baseOptions(on accelerator: Accelerator) -> BaseOptions {
        var options = BaseOptions()
        options.threadCount = threads
        options.isErrorLoggingEnabled = verbose
        options.accelerator = accelerator
        return options
    }
}
