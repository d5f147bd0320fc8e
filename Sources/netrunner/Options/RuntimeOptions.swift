import ArgumentParser
import TensorFlowLite

/// The options every command that runs a model shares.
struct RuntimeOptions: ParsableArguments {
    @Option(name: .shortAndLong, parsing: .unconditional, help: "CPU threads for XNNPACK (1 or more).")
    var threads: Int = 1

    @Flag(name: .long, help: "Show the runtime's own log lines on stderr.")
    var verbose = false

    func validate() throws {
        try OptionLimits.checkThreads(threads)
    }

    /// The interpreter options these flags describe.
    var interpreterOptions: Interpreter.Options {
        var options = Interpreter.Options()
        options.threadCount = threads
        options.isErrorLoggingEnabled = verbose
        return options
    }
}
