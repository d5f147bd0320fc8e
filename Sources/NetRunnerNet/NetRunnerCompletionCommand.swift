import ArgumentParser
import NetRunnerCommandLine

/// `netrunner`'s whole command tree, for its completion scripts only: the commands of
/// `netrunner` itself and, in place of the stubs it hands to this executable, the real `serve`,
/// `hub` and `import`, so that their flags and subcommands complete too.
///
/// `netrunner --generate-completion-script SHELL` (what `make install` and the Debian package
/// install for bash, zsh and fish) runs `netrunner-net --generate-completion-script SHELL`, which
/// parses with this root instead of ``NetRunnerNetCommand``. Its name is `netrunner`: the script
/// completes the command people type, and `netrunner-net` has none of its own to clash with.
struct NetRunnerCompletionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "netrunner",
        abstract: "Run, inspect and measure TensorFlow Lite models on the LiteRT runtime.",
        version: CommandLineMain.version,
        subcommands: CommandLineMain.completionSubcommands(replacing: [
            "serve": NetRunnerNetCommand.Serve.self,
            "hub": NetRunnerNetCommand.Hub.self,
            "import": NetRunnerNetCommand.Import.self,
        ])
    )
}
