import ArgumentParser
package import NetRunner

/// `--max-model-memory`, which `serve`, `hub serve`, `import` and `check` share: the most memory a model
/// may take when loaded and run, measured by the model gate's check process, before this process
/// serves or stores it (``ModelGate/Policy/memoryLimit``).
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

    /// The model gate's policy: this limit, and the nice value of the model checks: a
    /// server's (`asServer`, `serve` and `hub serve`, which bind it around their work) run
    /// below its requests (``ModelGate/serverNiceness``), a command's at the command's own.
    package func policy(asServer: Bool = false) -> ModelGate.Policy {
        ModelGate.Policy(memoryLimit: bytes, checkNiceness: asServer ? ModelGate.serverNiceness : 0)
    }

    /// Makes ``policy(asServer:)`` the process's default (`import` and `check`, whose every
    /// model is the command's).
    package func apply() {
        let policy = policy()
        ModelGate.memoryLimit = policy.memoryLimit
        ModelGate.checkNiceness = policy.checkNiceness
    }

    /// The limit in bytes, or `nil` for none (`0`).
    package var bytes: Int? { mebibytes == 0 ? nil : mebibytes << 20 }
}
