import ArgumentParser
import NetRunnerCommandLine

/// `netrunner-net`: the commands of `netrunner` that talk to the network, `serve`, `hub` and
/// `import` (`netrunner serve ...` runs `netrunner-net serve ...`), and `hub-path`, with which
/// `netrunner` resolves `--model hub:NAME[@REF]`.
struct NetRunnerNetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "netrunner",
        abstract: "Run, inspect and measure TensorFlow Lite models on the LiteRT runtime: the networked commands.",
        discussion: CommandLineMain.settingsHelp,
        version: CommandLineMain.version,
        subcommands: [
            Serve.self, Import.self, Hub.self, HubPath.self,
        ]
    )
}
