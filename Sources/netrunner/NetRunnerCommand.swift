import ArgumentParser

/// `netrunner`: run, inspect and measure TensorFlow Lite models on the LiteRT runtime.
@main
struct NetRunnerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "netrunner",
        abstract: "Run, inspect and measure TensorFlow Lite models on the LiteRT runtime.",
        version: "0.1.0",
        subcommands: [
            Classify.self, Detect.self, Run.self, Bulk.self, Evaluate.self, Inspect.self, Bench.self, Check.self,
            Bundle.self,
        ]
    )
}
