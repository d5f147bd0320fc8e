import ArgumentParser
import NetRunnerCommandLine
import NetRunnerHub
import NetRunnerSupport

/// `netrunner hub show`: a model's versions, aliases (flagged where a gated one points past its
/// gate), gates and evaluations.
extension NetRunnerNetCommand.Hub {
    /// `netrunner hub show NAME`.
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A model's versions and aliases.")

        @Argument(help: "The model's name.")
        var name: String

        @Flag(help: "Print JSON.")
        var json = false

        @OptionGroup var options: HubOptions

        func run() async throws {
            let client = options.client
            let name = self.name
            let model = try await client.model(name)
            if json { return try Console.printJSON(model) }
            Console.print("\(model.name): \(model.description)")
            for version in model.versions ?? [] {
                Console.print(
                    "  \(version.version)  sha256 \(version.sha256.prefix(12))  \(version.size) bytes  \(version.task)  "
                        + "\(version.createdAt) by \(version.createdBy)")
            }
            for alias in model.aliases {
                // A gated alias at a version that has not passed (forced, or moved by an older node).
                let flags = (alias.gateFlags ?? []).map(\.summary).joined(separator: "; ")
                Console.print(
                    "  \(alias.alias) -> \(alias.targets.summary)  (\(alias.updatedAt) by \(alias.updatedBy))"
                        + (flags.isEmpty ? "" : "  [not passed: \(flags)]"))
            }
            // Each gate, and where the newest versions stand with it.
            let gates = try await client.gates(model: name)
            guard !gates.isEmpty else { return }
            for gate in gates {
                Console.print(
                    "  gate on \(gate.alias) (revision \(gate.revision)): \(gate.bundles.joined(separator: ", ")); "
                        + gate.rules.map(\.description).joined(separator: "; "))
            }
            for version in (model.versions ?? []).suffix(10) {
                for evaluation in try await client.evaluations(model: name, version: version.version) {
                    Console.print("  \(version.version)  \(Gate.summary(evaluation))")
                }
            }
        }
    }
}
