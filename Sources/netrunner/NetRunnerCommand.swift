import ArgumentParser
import NetRunner
import TensorFlowLite

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `netrunner`: run, inspect and measure TensorFlow Lite models on the LiteRT runtime.
@main
struct NetRunnerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "netrunner",
        abstract: "Run, inspect and measure TensorFlow Lite models on the LiteRT runtime.",
        version: "0.1.0",
        subcommands: [
            Classify.self, Detect.self, Run.self, Bulk.self, Report.self, Evaluate.self, Serve.self, Inspect.self,
            Bench.self,
            Check.self, Bundle.self, Import.self, Hub.self, Stream.self, Models.self,
        ]
    )

    /// Serves `ModelCheck`'s child processes (the library's own protocol, not a command), then
    /// parses the command line and runs the command as ArgumentParser does, except that an
    /// error's message (which may quote file names and file contents) is written with its
    /// control characters escaped.
    static func main() async {
        if let status = ModelCheck.runChildIfRequested(arguments: CommandLine.arguments) {
            exit(withError: ExitCode(status))
        }
        // A file size limit (ulimit -f) makes a write fail with EFBIG, reported as an error,
        // instead of killing the process with SIGXFSZ.
        signal(SIGXFSZ, SIG_IGN)
        do {
            var command = try parseAsRoot()
            do {
                if var asynchronous = command as? any AsyncParsableCommand {
                    try await asynchronous.run()
                } else {
                    try command.run()
                }
            } catch let error as ValidationError {
                // A mistake found while running: the message, without the root command's usage.
                Console.diagnostic("Error: \(error.message)")
                exit(withError: ExitCode.validationFailure)
            }
        } catch {
            let code = exitCode(for: error)
            let message = optionMessage(for: error) ?? fullMessage(for: error)
            if code == .success {
                // --help and --version: the tool's own text, a command with a default
                // subcommand's with that subcommand's flags.
                if !message.isEmpty { Swift.print(helpWithDefaultFlags(message)) }
            } else {
                for line in message.split(separator: "\n", omittingEmptySubsequences: false) {
                    Console.diagnostic(String(line))
                }
            }
            exit(withError: code)
        }
    }

    /// The help of a command with a default subcommand, showing that subcommand's flags.
    ///
    /// `bulk` runs `bulk images` and `evaluate` runs `evaluate run`: their help is the default
    /// subcommand's, spelled without its name, followed by the other subcommands, so
    /// `netrunner bulk --help` shows the flags `netrunner bulk DIR` takes. Any other text is
    /// returned as it is.
    ///
    /// - Parameter message: The help ArgumentParser made.
    /// - Returns: The help to print.
    static func helpWithDefaultFlags(_ message: String) -> String {
        for parent in configuration.subcommands {
            guard let child = parent.configuration.defaultSubcommand,
                message == helpMessage(for: parent)
            else { continue }
            let parentName = "netrunner " + parent._commandName
            let childName = parentName + " " + child._commandName
            var text = helpMessage(for: child).replacing(childName, with: parentName)
            if let subcommands = message.firstRange(of: "\nSUBCOMMANDS:") {
                text += message[subcommands.lowerBound...]
            }
            return text
        }
        return message
    }

    /// A library option error in the command line's words: the library and the flags share
    /// their names (`categoryAllowlist` is `--category-allowlist`).
    static func optionMessage(for error: any Error) -> String? {
        guard case NetRunnerError.invalidOption(let name, let reason) = error else { return nil }
        var flag = "--"
        for character in name {
            if character.isUppercase { flag += "-" + character.lowercased() } else { flag.append(character) }
        }
        return "Error: \(flag): \(reason)."
    }
}
