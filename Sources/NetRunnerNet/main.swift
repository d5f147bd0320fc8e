// `netrunner-net`: `netrunner serve`, `hub` and `import`, which `netrunner` hands over, and
// `netrunner`'s completion scripts (every command's flags, these included).
import NetRunnerCommandLine

if let first = CommandLine.arguments.dropFirst().first, CommandLineMain.isCompletionScriptRequest(first) {
    await CommandLineMain.run(NetRunnerCompletionCommand.self)
} else {
    await CommandLineMain.run(NetRunnerNetCommand.self)
}
