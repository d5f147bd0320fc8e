package import ArgumentParser
import NetRunner
import NetRunnerImage
import NetRunnerSupport
import TensorFlowLite

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `netrunner`: run, inspect and measure TensorFlow Lite models on the LiteRT runtime.
///
/// The commands that talk to the network (`serve`, `hub`, `import`) live in a second
/// executable beside this one, `netrunner-net`, which `netrunner` hands them to, git-style:
/// the tool most people run first builds in a minute and a half, without the HTTP stacks.
struct NetRunnerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "netrunner",
        abstract: "Run, inspect and measure TensorFlow Lite models on the LiteRT runtime.",
        discussion: CommandLineMain.settingsHelp,
        version: CommandLineMain.version,
        // In --help, four groups: what a task answers of an image, runs over many images, the
        // models themselves, and serving them (`configuration.subcommands` flattens them, in
        // this order).
        groupedSubcommands: [
            CommandGroup(
                name: "Tasks",
                subcommands: [
                    Classify.self, Detect.self, Pose.self, Segment.self, Embed.self, Similar.self, Imprint.self,
                    Run.self,
                ]),
            CommandGroup(name: "Many images", subcommands: [Bulk.self, Report.self, Evaluate.self, Stream.self]),
            CommandGroup(
                name: "Models",
                subcommands: [
                    Models.self, Inspect.self, Bench.self, Check.self, Bundle.self, NetworkedImport.self,
                ]),
            CommandGroup(name: "Serving", subcommands: [NetworkedServe.self, NetworkedHub.self]),
        ]
    )
}

/// The entry of both executables: `netrunner` and `netrunner-net`.
package enum CommandLineMain {
    /// The tool's version, the same in both executables: the release and the commit it was
    /// built from (`0.2.0 (62e46ba)`, ``BuildVersion``).
    package static let version = BuildVersion.description
    /// The settings paragraph of both executables' `--help`: what a flag's default comes from.
    package static let settingsHelp = """
        Settings: a flag wins; else the environment (NETRUNNER_MODELS: the models folder --model ids are \
        looked up in; NETRUNNER_HUB, NETRUNNER_HUB_TOKEN: the hub of hub: models); else the settings file \
        ($NETRUNNER_CONFIG, else $XDG_CONFIG_HOME/netrunner/config.json, else ~/.config/netrunner/config.json: \
        a JSON object such as {"models": "~/models", "hub": "https://hub.example.com"}); else the defaults \
        (./Models when it is a folder; http://127.0.0.1:8090). The models installed with NetRunner \
        (share/netrunner/models beside its bin folder) are found by id from any folder.
        """

    /// The commands `netrunner` hands to `netrunner-net`.
    package static let networked: Set<String> = ["serve", "hub", "import"]
    /// The executable of the networked commands, beside `netrunner`.
    package static let networkedExecutable = "netrunner-net"

    /// `netrunner`: a networked command goes to `netrunner-net` (the process is replaced, so
    /// signals, exit status and output are that command's); every other one runs here.
    ///
    /// `--generate-completion-script` goes there too: `netrunner-net` knows every command's
    /// flags, `serve`'s, `hub`'s and `import`'s as well as those here, and writes the whole
    /// script of `netrunner` (``completionSubcommands``); without it, the script of the
    /// commands here.
    package static func core() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let first = arguments.first,
            networked.contains(first)
                || (first == "help" && arguments.count > 1 && networked.contains(arguments[1]))
        {
            execNetworked(first == "help" ? Array(arguments.dropFirst()) + ["--help"] : arguments)
        }
        if let first = arguments.first, isCompletionScriptRequest(first) {
            execNetworkedIfPresent(arguments)
        }
        await run(NetRunnerCommand.self)
    }

    /// Whether an argument asks ArgumentParser for a completion script
    /// (`--generate-completion-script`, `--generate-completion-script=SHELL`).
    package static func isCompletionScriptRequest(_ argument: String) -> Bool {
        argument == "--generate-completion-script" || argument.hasPrefix("--generate-completion-script=")
    }

    /// The subcommands of `netrunner`'s completion script: those of `netrunner --help`, the ones
    /// run by `netrunner-net` (`serve`, `hub`, `import`) replaced by `replacements`, the real
    /// commands, whose flags then complete.
    ///
    /// - Parameter replacements: `netrunner-net`'s commands by name.
    /// - Returns: The subcommands, in the order of `netrunner --help`.
    package static func completionSubcommands(
        replacing replacements: [String: any ParsableCommand.Type]
    ) -> [any ParsableCommand.Type] {
        NetRunnerCommand.configuration.subcommands.map { replacements[$0._commandName] ?? $0 }
    }

    /// The path of `netrunner-net`: beside this executable.
    package static func networkedPath() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        #if os(Linux)
            let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
            let me = count > 0 ? String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        #else
            let me = ""
        #endif
        let path = me.isEmpty ? CommandLine.arguments[0] : me
        let folder = path.contains("/") ? String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)]) : "."
        return folder + "/" + networkedExecutable
    }

    /// Replaces this process with `netrunner-net ARGUMENTS`; returns only to exit with a clear
    /// message when it cannot be started.
    static func execNetworked(_ arguments: [String]) -> Never {
        let path = networkedPath()
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        execv(path, argv)
        Console.diagnostic(
            "Error: netrunner \(arguments.first ?? "") runs \(path), which cannot be started: "
                + "\(String(cString: strerror(errno))). `make install` (or `swift build --product netrunner-net`) "
                + "builds it beside netrunner.")
        exit(127)
    }

    /// Replaces this process with `netrunner-net ARGUMENTS` if it can be started; else returns.
    static func execNetworkedIfPresent(_ arguments: [String]) {
        let path = networkedPath()
        guard access(path, X_OK) == 0 else { return }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        execv(path, argv)
    }

    /// The environment variable that keeps HEIC and AVIF decoding in process (`1`).
    package static let decodeInProcessVariable = "NETRUNNER_DECODE_IN_PROCESS"

    /// Serves `ModelCheck`'s child processes (the library's own protocol, not a command), then
    /// parses the command line and runs the command as ArgumentParser does, except that an
    /// error's message (which may quote file names and file contents) is written with its
    /// control characters escaped.
    ///
    /// - Parameter root: The executable's root command.
    package static func run<Root: ParsableCommand>(_ root: Root.Type) async {
        if let status = ModelCheck.runChildIfRequested(arguments: CommandLine.arguments) {
            Root.exit(withError: ExitCode(status))
        }
        // A decoder child of a DecoderIsolation pool (this executable's own, or a server's).
        if let status = DecoderIsolation.runChildIfRequested(arguments: CommandLine.arguments) {
            Root.exit(withError: ExitCode(status))
        }
        // HEIC and AVIF decode in child processes of this executable, started on the first such
        // photo: libheif 1.19 corrupts its heap on a grid whose tiles decode to another size than
        // they declare (Tests/Fixtures/Hostile/heic_grid_tile_taller.heic), and a bulk run over a
        // phone's library must not die of one file. NETRUNNER_DECODE_IN_PROCESS=1 turns it off.
        if getenv(decodeInProcessVariable).map({ String(cString: $0) }) != "1" {
            ImageDecoder.isolation = DecoderIsolation(.init(children: OptionLimits.coreCount))
        }
        // A file size limit (ulimit -f) makes a write fail with EFBIG, reported as an error,
        // instead of killing the process with SIGXFSZ.
        signal(SIGXFSZ, SIG_IGN)
        if let message = unknownSubcommand(Root.self, arguments: Array(CommandLine.arguments.dropFirst())) {
            Console.diagnostic(message)
            Root.exit(withError: ExitCode.validationFailure)
        }
        do {
            var command = try Root.parseAsRoot()
            do {
                if var asynchronous = command as? any AsyncParsableCommand {
                    try await asynchronous.run()
                } else {
                    try command.run()
                }
            } catch let error as ValidationError {
                // A mistake found while running: the message, without the root command's usage.
                Console.diagnostic("Error: \(error.message)")
                Root.exit(withError: ExitCode.validationFailure)
            }
        } catch {
            let code = Root.exitCode(for: error)
            let message =
                optionMessage(for: error) ?? FlagAdvice.message(for: error).map { "Error: \($0)" }
                ?? Root.fullMessage(for: error)
            if code == .success {
                // --help and --version: the tool's own text, a command with a default
                // subcommand's with that subcommand's flags.
                if !message.isEmpty { Swift.print(helpWithDefaultFlags(message, root: Root.self)) }
            } else {
                for line in message.split(separator: "\n", omittingEmptySubsequences: false) {
                    Console.diagnostic(String(line))
                }
            }
            Root.exit(withError: code)
        }
    }

    /// The help of a command with a default subcommand, showing that subcommand's flags.
    ///
    /// `bulk` runs `bulk images` and `evaluate` runs `evaluate run`: their help is the default
    /// subcommand's, spelled without its name, followed by the other subcommands, so
    /// `netrunner bulk --help` shows the flags `netrunner bulk DIR` takes. Any other text is
    /// returned as it is.
    ///
    /// - Parameters:
    ///   - message: The help ArgumentParser made.
    ///   - root: The root command.
    /// - Returns: The help to print.
    static func helpWithDefaultFlags<Root: ParsableCommand>(_ message: String, root: Root.Type) -> String {
        for parent in Root.configuration.subcommands {
            guard let child = parent.configuration.defaultSubcommand,
                message == Root.helpMessage(for: parent)
            else { continue }
            let parentName = "netrunner " + parent._commandName
            let childName = parentName + " " + child._commandName
            var text = Root.helpMessage(for: child).replacing(childName, with: parentName)
            if let subcommands = message.firstRange(of: "\nSUBCOMMANDS:") {
                text += message[subcommands.lowerBound...]
            }
            return text
        }
        return message
    }

    /// A mistyped command (`netrunner clasify`, `netrunner hub lst`), said with the closest
    /// command, as flags already are ("did you mean"); `nil` when the words name commands.
    ///
    /// ArgumentParser alone answers "2 unexpected arguments: 'clasify', 'x.jpg'".
    ///
    /// - Parameters:
    ///   - root: The executable's root command.
    ///   - arguments: The command line, without the executable.
    /// - Returns: The message, or `nil`.
    static func unknownSubcommand(_ root: any ParsableCommand.Type, arguments: [String]) -> String? {
        var command = root
        var path = [root._commandName]
        for argument in arguments {
            let subcommands = command.configuration.subcommands
            guard !subcommands.isEmpty, command.configuration.defaultSubcommand == nil,
                !argument.hasPrefix("-"), argument != "help"
            else { return nil }
            guard
                let next = subcommands.first(where: {
                    $0._commandName == argument || $0.configuration.aliases.contains(argument)
                })
            else {
                let names = subcommands.map { $0._commandName }
                let guess = closestMatch(to: argument, in: names).map { ". Did you mean '\($0)'?" } ?? "."
                let name = path.joined(separator: " ")
                return "Error: '\(argument)' is not a \(name) command\(guess) See '\(name) --help' for the commands."
            }
            command = next
            path.append(argument)
        }
        return nil
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

/// `netrunner serve`, `hub` and `import` in `netrunner --help`: they run in `netrunner-net`
/// (``CommandLineMain/core()`` hands them over before parsing).
struct NetworkedServe: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve models over HTTP: a native API at /v1 and KServe v2 (Triton clients) at /v2.")
    func run() throws { CommandLineMain.execNetworked(["serve"]) }
}

/// `netrunner import` (in `netrunner-net`).
struct NetworkedImport: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import a model by URL or path into a models folder, validated, for evaluate and serve.")
    func run() throws { CommandLineMain.execNetworked(["import"]) }
}

/// `netrunner hub` (in `netrunner-net`).
struct NetworkedHub: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hub", abstract: "A self-hosted model hub: serve it, publish, list, pull, move aliases, roll back."
    )
    func run() throws { CommandLineMain.execNetworked(["hub"]) }
}
