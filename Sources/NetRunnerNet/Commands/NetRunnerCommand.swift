/// The namespace of the networked commands, as in `netrunner` (`NetRunnerCommand.Serve`).
enum NetRunnerCommand {}
