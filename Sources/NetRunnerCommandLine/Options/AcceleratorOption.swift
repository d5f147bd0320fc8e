public import ArgumentParser
import Synchronization
public import TensorFlowLite

extension Accelerator: ExpressibleByArgument {}

/// The help of `--accelerator`, the same in every command that runs a model.
package enum AcceleratorHelp {
    package static let text: ArgumentHelp = ArgumentHelp(
        "Where the model runs: cpu (XNNPACK), gpu (LiteRT's GPU accelerator over Vulkan; fails with the reason when no GPU is usable) or auto (the GPU when usable, else the CPU with one notice) (default: cpu).",
        valueName: "cpu|gpu|auto")
}

/// The one notice of a run whose `--accelerator auto` found no usable GPU: printed once per
/// process, however many interpreters fell back.
package enum AcceleratorNotice {
    private static let shown = Atomic<Bool>(false)

    /// Prints the notice the first time a task that asked for `auto` runs on the CPU.
    ///
    /// - Parameters:
    ///   - requested: What the command asked for.
    ///   - fallbackReason: The task's ``Interpreter/acceleratorFallbackReason``.
    package static func note(requested: Accelerator, fallbackReason: String?) {
        guard requested == .auto, let fallbackReason else { return }
        guard !shown.exchange(true, ordering: .relaxed) else { return }
        Console.diagnostic("note: --accelerator auto runs on the CPU: \(fallbackReason).")
    }
}

/// `--accelerator` alone, for the commands that run one interpreter (`run`, `bench`).
struct AcceleratorOptions: ParsableArguments {
    @Option(help: AcceleratorHelp.text)
    var accelerator: Accelerator?

    /// What the model runs on: `--accelerator`, else the CPU.
    var choice: Accelerator { accelerator ?? .cpu }
}
