import ArgumentParser
import FoundationEssentials
import Logging
import NetRunnerCommandLine
import NetRunnerHub
import NetRunnerHubServer
import NetRunnerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension NetRunnerNetCommand {
    /// `netrunner hub ...`: the self-hosted model hub and its client.
    struct Hub: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A self-hosted model hub: serve it, publish, list, pull, move aliases, roll back.",
            discussion: """
                The hub's address comes from --hub, NETRUNNER_HUB or "hub" in ~/.config/netrunner/config.json \
                (default http://127.0.0.1:8090), the client's \
                key from --token or NETRUNNER_HUB_TOKEN. Models published there run anywhere --model is taken: \
                --model hub:flowers@production.
                """,
            subcommands: [
                Serve.self, Push.self, List.self, Show.self, Pull.self, Alias.self, Rollback.self, History.self,
                Gate.self, Experiment.self, Delete.self, Key.self, Cache.self,
            ])
    }
}

/// `--hub` and `--token`.
struct HubOptions: ParsableArguments {
    @Option(help: "The hub's address (\(HubSetting.precedence)).")
    var hub: String?

    @Option(help: "Your hub key (default: NETRUNNER_HUB_TOKEN).")
    var token: String?

    mutating func validate() throws { hub = try HubSetting.address(flag: hub) }

    var client: HubClient { HubClient(address: hub, token: token) }
}

/// `NAME ALIAS`: the alias of a model that `rollback`, `history` and `alias` act on.
struct HubAliasArguments: ParsableArguments {
    @Argument(help: "The model's name.")
    var name: String

    @Argument(help: "The alias.")
    var alias: String
}

extension NetRunnerNetCommand.Hub {
    /// `netrunner hub serve`.
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Run the hub: an embedded SQLite database (or --database postgres://...) and the files in --data, on 127.0.0.1:8090."
        )

        @Option(help: "The folder of the hub's database and files (made if missing).")
        var data = "Hub"

        @Option(
            help:
                "A PostgreSQL database for the metadata instead of the embedded SQLite (postgres://user:password@host:port/db?tlsmode=disable); nodes sharing it and the --data folder serve one hub."
        )
        var database: String?

        @Option(
            name: .customLong("database-timeout"), parsing: .unconditional,
            help:
                "With --database: the seconds a statement may go unanswered before its request fails with 503 and the node connects again."
        )
        var databaseTimeout = 30.0

        @Option(help: "The address to bind (127.0.0.1: this machine only).")
        var host = "127.0.0.1"

        @Option(parsing: .unconditional, help: "The port (0: any free port).")
        var port = 8090

        @Option(
            name: .customLong("admin-key"),
            help: "The first admin key, stored hashed (default: NETRUNNER_HUB_ADMIN_KEY).")
        var adminKey: String?

        @Option(
            name: .customLong("admin-key-file"),
            help:
                "Read the first admin key from this file's first line instead (not shown by ps; the package's service uses it)."
        )
        var adminKeyFile: String?

        @Flag(help: "Require a key with the read scope to list and download (default: anonymous reading).")
        var `private` = false

        @Option(
            name: .customLong("max-upload-bytes"), parsing: .unconditional,
            help: "The largest upload, in bytes (1073741824 is 1 GiB).")
        var maximumUploadBytes = 1 << 30

        @Option(
            name: .customLong("adoption-limit"), parsing: .unconditional,
            help:
                "The most client ids whose adoption is counted per model (only resolves with a key count: anonymous ids could be forged)."
        )
        var adoptionLimit = 100_000

        @Option(
            name: .customLong("test-bundles"),
            help:
                "The folder of .testbundle folders that gates evaluate versions on (netrunner hub gate); without it no gate can be set."
        )
        var testBundles: String?

        @Option(help: "The netrunner that evaluates versions for the gates (default: the one beside netrunner-net).")
        var evaluator: String?

        @Option(
            name: .customLong("gate-concurrency"), parsing: .unconditional,
            help: "The most gate evaluations at once (each a netrunner evaluate process).")
        var gateConcurrency = 1

        @Option(
            name: .customLong("gate-timeout"), parsing: .unconditional,
            help: "The seconds one gate evaluation may take before it is stopped and counted as failed.")
        var gateTimeout = 900.0

        @Option(
            name: .customLong("gate-queue-limit"), parsing: .unconditional,
            help: ArgumentHelp(
                "The most gate evaluations of one model waiting in memory; more wait in the store.",
                visibility: .hidden))
        var gateQueueLimit = 16

        @OptionGroup var connections: ConnectionOptions

        @OptionGroup var modelMemory: ModelMemoryOption

        func validate() throws {
            try OptionLimits.check(port, "--port", in: 0...65_535)
            try OptionLimits.check(gateConcurrency, "--gate-concurrency", in: 1...64)
            try OptionLimits.check(gateTimeout, "--gate-timeout", in: 1...86_400)
            try OptionLimits.check(gateQueueLimit, "--gate-queue-limit", in: 1...4096)
            try OptionLimits.check(maximumUploadBytes, "--max-upload-bytes", in: 1024...(1 << 34))
            try OptionLimits.check(adoptionLimit, "--adoption-limit", in: 0...10_000_000)
            try OptionLimits.check(databaseTimeout, "--database-timeout", in: 0.1...3600)
            if adminKey != nil && adminKeyFile != nil {
                throw ValidationError("Give --admin-key or --admin-key-file, not both.")
            }
        }

        func run() async throws {
            let hub = try makeHub()
            let folder = data
            try await ListenFailure.explaining("netrunner hub serve", host: host, port: port) {
                try await hub.run { host, port in
                    Console.print("netrunner hub: listening on http://\(host):\(port) (data in \(folder))")
                    Console.flush()
                }
            }
        }

        /// The hub ``run()`` serves: the options made into a configuration (the tests build
        /// it in process, as the command does).
        ///
        /// - Parameter logger: The hub's logger (its level is set here).
        /// - Returns: The hub, not started.
        /// - Throws: `ValidationError` for an unreadable or empty `--admin-key-file`.
        func makeHub(logger: Logger = Logger(label: "netrunner.hub")) throws -> HubServer {
            var logger = logger
            logger.logLevel = .notice
            let key =
                try adminKeyFromFile() ?? adminKey ?? getenv("NETRUNNER_HUB_ADMIN_KEY").map { String(cString: $0) }
            var configuration = HubServer.Configuration(
                host: host, port: port, dataFolder: data, adminKey: key, anonymousRead: !`private`,
                maximumUploadBytes: maximumUploadBytes, databaseURL: database,
                databaseDeadline: .milliseconds(Int64(databaseTimeout * 1000)))
            configuration.allowedHosts = Set(connections.allowedHosts)
            configuration.idleTimeout = connections.idle
            configuration.maximumConnections = connections.maximumConnections
            configuration.maximumConnectionsPerAddress = connections.maximumConnectionsPerAddress
            configuration.requestTimeout = connections.request(or: configuration.requestTimeout)
            configuration.drainTimeout = connections.drain
            // Every upload's check and validation, in the hub's handlers' tasks, takes it.
            configuration.modelGate = modelMemory.policy(asServer: true)
            configuration.adoptionLimit = adoptionLimit
            configuration.testBundles = testBundles.map {
                $0.hasPrefix("/") ? $0 : FileManager.default.currentDirectoryPath + "/" + $0
            }
            configuration.evaluator = evaluator
            configuration.gateConcurrency = gateConcurrency
            configuration.gateTimeout = .milliseconds(Int64(gateTimeout * 1000))
            configuration.gateQueueLimit = gateQueueLimit
            return HubServer(configuration: configuration, logger: logger)
        }

        /// The key on the first line of `--admin-key-file` (a trailing `\r` dropped), or `nil`
        /// without the option.
        func adminKeyFromFile() throws -> String? {
            guard let adminKeyFile else { return nil }
            // Bytes, not Characters: "\r\n" is one Character, which a split on "\n" never finds.
            var line = Array(try FileIO.contents(of: adminKeyFile, maximumSize: 1 << 16).prefix { $0 != 10 })
            if line.last == 13 { line.removeLast() }
            guard !line.isEmpty else {
                throw ValidationError("--admin-key-file \(adminKeyFile): its first line holds no key.")
            }
            guard line.allSatisfy({ $0 > 32 && $0 != 127 }) else {
                throw ValidationError(
                    "--admin-key-file \(adminKeyFile): the first line is not a key (keys hold no spaces or control characters)."
                )
            }
            return String(decoding: line, as: UTF8.self)
        }
    }

    /// `netrunner hub push FILE --name NAME [--alias A]`.
    struct Push: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Publish a bundle (zipped or a folder) or a .tflite as the next version of a model.")

        @Argument(
            help:
                "A zipped bundle (.tiobundle.zip), a bundle folder (zipped as it is sent, no copy written) or a .tflite."
        )
        var file: String

        @Option(help: "The model's name on the hub.")
        var name: String

        @Option(help: "An alias to point at the new version (production, staging...).")
        var alias: String?

        @Flag(
            name: .customLong("allow-task-change"),
            help: "Publish a model of another task than the name's newest version (refused without it).")
        var allowTaskChange = false

        @OptionGroup var options: HubOptions

        func run() async throws {
            let client = options.client
            let (file, name, alias, allowTaskChange) = (self.file, self.name, self.alias, self.allowTaskChange)
            let version = try await client.push(file: file, name: name, alias: alias, allowTaskChange: allowTaskChange)
            // A gated alias moves once the version passes its gate. The version is published
            // whatever the gates' answer: without one, the line says both ways.
            var moved = ""
            if let alias {
                switch try? await client.gates(model: name).contains(where: { $0.alias == alias }) {
                case true?: moved = "; \(alias) moves to it once it passes its gate (netrunner hub show \(name))"
                case false?: moved = "; \(alias) -> \(version.version)"
                case nil:
                    moved =
                        "; \(alias) -> \(version.version), or once it passes its gate if \(alias) has one (netrunner hub show \(name))"
                }
            }
            Console.print(
                "published \(version.name)@\(version.version) (sha256 \(version.sha256.prefix(12)), \(version.size) bytes, "
                    + "\(version.task))" + moved)
        }
    }

    /// `netrunner hub list [SEARCH]`.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the hub's models (matching SEARCH).")

        @Argument(help: "Words in the name or description.")
        var search: String?

        @Flag(help: "Print JSON.")
        var json = false

        @OptionGroup var options: HubOptions

        func run() async throws {
            let client = options.client
            let search = self.search
            let models = try await client.models(search: search)
            if json { return try Console.printJSON(["models": models]) }
            if models.isEmpty { Console.print("no models on \(client.address)") }
            for model in models {
                let aliases = model.aliases.map { "\($0.alias) -> \($0.targets.summary)" }.joined(separator: ", ")
                Console.print(
                    "\(model.name)  latest \(model.latestVersion ?? 0)  \(model.description)"
                        + (aliases.isEmpty ? "" : "  [\(aliases)]"))
            }
        }
    }

    /// `netrunner hub pull NAME[@REF]`.
    struct Pull: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Download a model into the local cache (verified; resumed if interrupted) and print its path.")

        @Argument(help: "NAME, NAME@VERSION, NAME@ALIAS or NAME@sha256:HEX.")
        var model: String

        @Flag(help: "Use the local copy if there is one, without asking the hub.")
        var local = false

        @Option(
            name: .customLong("max-bytes-per-second"), parsing: .unconditional,
            help: "Download no faster than this (a condition).")
        var maximumBytesPerSecond: Int?

        @Flag(name: .customLong("requires-ac-power"), help: "Download only on mains power (when there is a battery).")
        var requiresACPower = false

        @Flag(name: .customLong("no-metered"), help: "Do not download over a metered connection (NetworkManager's).")
        var noMetered = false

        @Option(help: "Download only in these local hours, START-END (22-6 wraps past midnight).")
        var hours: String?

        @Option(
            name: .customLong("max-download-bytes"), parsing: .unconditional,
            help:
                "The largest file downloaded: a hub publishing more is refused before a byte is asked for (1073741824 is 1 GiB)."
        )
        var maximumDownloadBytes = HubClient.defaultMaximumDownloadBytes

        @OptionGroup var options: HubOptions

        func validate() throws {
            try OptionLimits.check(maximumDownloadBytes, "--max-download-bytes", in: 1...(1 << 40))
            if let maximumBytesPerSecond {
                try OptionLimits.check(maximumBytesPerSecond, "--max-bytes-per-second", in: 1...(1 << 40))
            }
        }

        func run() async throws {
            var client = options.client
            client.maximumDownloadBytes = maximumDownloadBytes
            let downloader = ModelDownloader(hub: client)
            var conditions = ModelDownloadConditions(
                allowsCellularAccess: !noMetered, requiresACPower: requiresACPower,
                maximumBytesPerSecond: maximumBytesPerSecond)
            if let hours {
                let parts = hours.split(separator: "-").compactMap { Int($0) }
                guard parts.count == 2, parts.allSatisfy({ (0...24).contains($0) }), parts[0] != parts[1] else {
                    throw ValidationError("--hours is START-END in whole hours, such as 1-5 or 22-6, not \(hours).")
                }
                conditions.allowedHours = .init(start: parts[0], end: parts[1])
            }
            let (model, type, chosen) = (self.model, local ? ModelDownloadType.localModel : .latestModel, conditions)
            let meter = PullMeter()
            let events = downloader.events
            let watcher = Task {
                for await event in events { meter.show(event) }
            }
            let found = try await downloader.getModel(name: model, downloadType: type, conditions: chosen)
            watcher.cancel()
            meter.finish()
            Console.print("\(found.name)@\(found.version) sha256 \(found.hash) \(found.size) bytes")
            Console.print(found.path)
        }
    }

    /// `netrunner hub rollback NAME ALIAS`.
    struct Rollback: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Point an alias back where it was before its last change.")

        @OptionGroup var target: HubAliasArguments

        @OptionGroup var options: HubOptions

        func run() async throws {
            let client = options.client
            let (name, alias) = (target.name, target.alias)
            let found = try await client.rollback(alias, model: name)
            Console.print("\(found.name): \(found.alias) -> \(found.targets.summary) (rolled back)")
        }
    }

    /// `netrunner hub history NAME ALIAS`.
    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "An alias's history: who pointed it where, when.")

        @OptionGroup var target: HubAliasArguments

        @OptionGroup var options: HubOptions

        func run() async throws {
            let client = options.client
            let (name, alias) = (target.name, target.alias)
            let history = try await client.history(of: alias, model: name)
            for change in history {
                let before = change.previous.isEmpty ? "(new)" : change.previous.summary
                Console.print(
                    "\(change.sequence)  \(change.changedAt)  \(change.changedBy)  \(change.action)  "
                        + "\(before) -> \(change.targets.summary)"
                        + (change.reason.map { "  reason: \($0)" } ?? "")
                        + (change.overridden.map { "  overrode: \($0.joined(separator: "; "))" } ?? ""))
            }
        }
    }

    /// `netrunner hub delete NAME VERSION`.
    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Unpublish a version (admin key; refused while an alias points to it).")

        @Argument(help: "The model's name.")
        var name: String

        @Argument(help: "The version.")
        var version: Int

        @OptionGroup var options: HubOptions

        func run() async throws {
            let client = options.client
            let (name, version) = (self.name, self.version)
            try await client.delete(version: version, model: name)
            Console.print("deleted \(name)@\(version)")
        }
    }

    /// `netrunner hub cache [--gc]`.
    struct Cache: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The local copies of hub models: list them, or remove what nothing names (--gc).")

        @Flag(help: "Remove cached files no reference names, and stale partial downloads.")
        var gc = false

        @Option(help: "Forget a model's local copies.")
        var delete: String?

        func run() throws {
            let cache = HubCache()
            if let delete {
                Console.print("freed \(cache.delete(name: delete)) bytes")
                return
            }
            if gc {
                Console.print("freed \(cache.collectGarbage()) bytes")
                return
            }
            for (hub, resolution, entry) in cache.references() {
                Console.print(
                    "\(hub)  \(resolution.name)@\(resolution.reference) -> \(resolution.version)  "
                        + (entry.map { "\($0.size) bytes  \($0.path)" } ?? "(not downloaded)"))
            }
        }
    }
}

/// A pull's progress on a terminal.
private final class PullMeter: Sendable {
    private let meter = ByteMeter()

    func show(_ event: ModelDownloadEvent) {
        switch event {
        case .progress(let name, let received, let total): meter.bytes(name, received: received, total: total)
        case .verifying(let name): meter.step("\(name)  verifying")
        default: break
        }
    }

    func finish() { meter.finish() }
}
