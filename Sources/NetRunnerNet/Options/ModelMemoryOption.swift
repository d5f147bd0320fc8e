import ArgumentParser
import NetRunner
import NetRunnerCommandLine

/// `--max-model-memory`, which `serve`, `hub serve` and `import` share: the most memory a model
/// may take when loaded and run, measured by the model gate's check process, before this process
/// serves or stores it (``ModelGate/memoryLimit``).
struct ModelMemoryOption: ParsableArguments {
    /// The default, in MiB: the embedded and bundled models take 10-48 MiB; a worker holds one
    /// interpreter per model, so this leaves room for several on a small machine.
    static let defaultMebibytes = 512

    @Option(
        name: .customLong("max-model-memory"), parsing: .unconditional,
        help: ArgumentHelp(
            "The most memory, in MiB, a model may take when loaded and run once (measured in the model check's own process before the model is served or stored; 0: no limit).",
            valueName: "mib"))
    var mebibytes = ModelMemoryOption.defaultMebibytes

    func validate() throws {
        try OptionLimits.check(mebibytes, "--max-model-memory", in: 0...1_048_576)
    }

    /// Sets the limit for the whole process.
    func apply() {
        ModelGate.memoryLimit = mebibytes == 0 ? nil : mebibytes << 20
    }
}
