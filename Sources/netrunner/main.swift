// `netrunner`: the commands that run models; `serve`, `hub` and `import` are handed to
// `netrunner-net` beside it.
import NetRunnerCommandLine

await CommandLineMain.core()
