import ArgumentParser
import NetRunner
import TensorFlowLite

extension NetRunnerCommand {
    /// `netrunner check MODEL...`: load, compile and run each model once in a child process.
    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check untrusted models: each is loaded, compiled and run once in a child process.",
            discussion: """
                A model that crashes or hangs the runtime only takes the child process down. A bundle folder \
                (.tiobundle, .tfbundle) is checked by the model file its model.json names. A model that \
                declares more tensors than --max-model-memory, or takes more when loaded and run, is \
                rejected, as serve, import and hub serve refuse it. Exits 0 when every model is accepted, 1 otherwise.
                """)

        @Argument(help: "The models to check: .tflite files or bundle folders.")
        var models: [String]

        @OptionGroup var runtime: RuntimeOptions

        @OptionGroup var modelMemory: ModelMemoryOption

        @Option(parsing: .unconditional, help: "Seconds a model may take to load and run before it is refused.")
        var timeout: Double = 60

        func validate() throws {
            guard !models.isEmpty else { throw ValidationError("Name at least one model file.") }
            try OptionLimits.checkSeconds(timeout, "--timeout")
        }

        func run() throws {
            // The child's side is not here: `ModelCheck` runs this executable with its own
            // arguments, which `NetRunnerCommand.main()` hands to the library before parsing.
            var failures = 0
            for model in models {
                // A bundle folder: its model file, checked to lie inside it.
                let modelPath: String
                do {
                    modelPath = ModelBundle.isBundle(model) ? try ModelBundle(path: model).modelPath : model
                } catch {
                    failures += 1
                    Console.print("rejected  \(model): \(error)")
                    continue
                }
                let limit = modelMemory.bytes
                let report = try ModelCheck.report(
                    modelPath: modelPath, options: runtime.interpreterOptions, timeout: timeout, memoryBudget: limit)
                switch report.verdict {
                case .accepted:
                    // Worded as the model gate words it for serve, import and hub serve.
                    if let limit, let memory = report.memoryBytes, memory > limit {
                        failures += 1
                        Console.print(
                            "rejected  \(model): \(modelPath) takes \(Self.mebibytes(memory)) MiB of memory when "
                                + "loaded and run once (measured in a check process), more than this process's "
                                + "limit of \(Self.mebibytes(limit)) MiB (--max-model-memory)")
                    } else {
                        Console.print("accepted  \(model)")
                    }
                case .rejected(let reason):
                    failures += 1
                    let flag = report.isOverBudget && limit != nil ? ", this process's limit (--max-model-memory)" : ""
                    Console.print("rejected  \(model): \(reason)\(flag)")
                case .crashed(let reason):
                    failures += 1
                    Console.print("crashed   \(model): \(reason)")
                case .timedOut(let seconds):
                    failures += 1
                    Console.print("timed out \(model): no answer within \(seconds) s")
                }
            }
            if failures > 0 { throw ExitCode.failure }
        }

        /// Bytes in MiB, rounded up (as the model gate rounds them).
        private static func mebibytes(_ bytes: Int) -> Int { (bytes + (1 << 20) - 1) >> 20 }
    }
}
