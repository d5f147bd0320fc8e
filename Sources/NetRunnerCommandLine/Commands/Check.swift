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
                (.tiobundle, .tfbundle) is checked by the model file its model.json names. \
                Exits 0 when every model is accepted, 1 otherwise.
                """)

        @Argument(help: "The models to check: .tflite files or bundle folders.")
        var models: [String]

        @OptionGroup var runtime: RuntimeOptions

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
                let verdict = try ModelCheck.check(
                    modelPath: modelPath, options: runtime.interpreterOptions, timeout: timeout)
                switch verdict {
                case .accepted:
                    Console.print("accepted  \(model)")
                case .rejected(let reason):
                    failures += 1
                    Console.print("rejected  \(model): \(reason)")
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
    }
}
