import ArgumentParser
import NetRunnerCommandLine
import NetRunnerHub

/// `netrunner hub key`: a new API key.
extension NetRunnerNetCommand.Hub {
    /// `netrunner hub key NAME --scope report|read|publish|admin`.
    struct Key: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make an API key (admin key needed); it is printed once, the hub keeps only its digest.",
            discussion: """
                NAME says who or what uses the key (netrunner hub key ci-publisher --scope publish); a word \
                of a command (create, list, revoke...) is refused, since `hub key` has no verbs. Keys are \
                listed and revoked in the Keys section of the hub's page (with an admin key).
                """)

        @Argument(help: "A name for the key (who or what uses it).")
        var name: String

        @Option(help: "report (only report experiments' events), read, publish or admin.")
        var scope: String = "read"

        @OptionGroup var options: HubOptions

        /// Words that read as a verb of the command rather than a name: `hub key create` would
        /// otherwise make a key called "create" and print its secret.
        static let verbs: Set<String> = [
            "add", "create", "del", "delete", "get", "help", "list", "ls", "make", "new", "remove", "revoke", "rm",
            "show",
        ]

        func validate() throws {
            guard !Self.verbs.contains(name.lowercased()) else {
                throw ValidationError(
                    "'\(name)' is a word of a command, not a key name: `hub key` has no verbs. Did you mean "
                        + "`netrunner hub key NAME --scope read|publish|admin`, NAME saying who or what uses the key "
                        + "(netrunner hub key ci-publisher --scope publish)? Keys are listed and revoked in the "
                        + "Keys section of the hub's page.")
            }
        }

        func run() async throws {
            guard let scope = HubScope(rawValue: scope) else {
                throw ValidationError("--scope is report, read, publish or admin, not \(scope).")
            }
            let client = options.client
            let name = self.name
            let key = try await client.createKey(name: name, scope: scope)
            Console.print(key)
        }
    }
}
