import ArgumentParser
import TensorFlowLite

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

    /// Serves `ModelCheck`'s child processes (the library's own protocol, not a command), then
    /// parses the command line as usual.
    static func main() {
        if let status = ModelCheck.runChildIfRequested(arguments: CommandLine.arguments) {
            exit(withError: ExitCode(status))
        }
        main(nil)
    }
}
