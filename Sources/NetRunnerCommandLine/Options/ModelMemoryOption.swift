import ArgumentParser
import NetRunner

/// `--max-model-memory`, which `serve`, `hub serve`, `import` and `check` share: the most memory a model
/// may take when loaded and run, measured by the model gate's check process, before this process
/// serves or stores it (``ModelGate/memoryLimit``).
package struct ModelMemoryOption: ParsableArguments {
    /// The default, in MiB: the embedded and bundled models take 10-48 MiB; a worker holds one
    /// interpreter per model, so this leaves room for several on a small machine.
    package static let defaultMebibytes = 512

    @Option(
        name: .customLong("max-model-memory"), parsing: .unconditional,
        help: ArgumentHelp(
            "The most memory, in MiB, a model may take when loaded and run once (measured in the model check's own process before the model is served or stored; 0: no limit).",
            valueName: "mib"))
    package var mebibytes = ModelMemoryOption.defaultMebibytes

    package init() {}

    package func validate() throws {
        try OptionLimits.check(mebibytes, "--max-model-memory", in: 0...1_048_576)
    }

    /// Sets the limit for the whole process, and the nice value of its model checks: a
    /// server's (`asServer`, `serve` and `hub serve`) run below its requests
    /// (``ModelGate/serverNiceness``), a command's at the command's own.
    package func apply(asServer: Bool = false) {
        ModelGate.memoryLimit = bytes
        ModelGate.checkNiceness = asServer ? ModelGate.serverNiceness : 0
    }

    /// The limit in bytes, or `nil` for none (`0`).
    package var bytes: Int? { mebibytes == 0 ? nil : mebibytes << 20 }
}
