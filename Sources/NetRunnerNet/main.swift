// `netrunner-net`: `netrunner serve`, `hub` and `import`, which `netrunner` hands over.
import NetRunnerCommandLine

await CommandLineMain.run(NetRunnerNetCommand.self)
