import ArgumentParser
import NetRunnerCommandLine
import NetRunnerHub
import NetRunnerSupport

/// `netrunner hub alias`: point an alias, saying what the hub recorded (moved, forced, or nothing
/// changed).
extension NetRunnerNetCommand.Hub {
    /// `netrunner hub alias NAME ALIAS VERSION[:WEIGHT]...`.
    struct Alias: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Point an alias at a version, or at several with weights (a staged rollout).",
            discussion: "netrunner hub alias flowers production 7          # everyone gets 7\n"
                + "netrunner hub alias flowers production 7:90 8:10  # 90% of clients get 7, 10% get 8")

        @OptionGroup var target: HubAliasArguments

        @Argument(help: "VERSION, or VERSION:PERCENT for each version of a staged rollout.")
        var targets: [String]

        @Option(
            help:
                "Move a gated alias to versions that have not passed its gate (an admin key), giving the reason kept in its history."
        )
        var force: String?

        @OptionGroup var options: HubOptions

        func run() async throws {
            var parsed: [HubAliasTarget] = []
            do {
                for target in targets {
                    let parts = target.split(separator: ":", omittingEmptySubsequences: false)
                    guard (1...2).contains(parts.count) else {
                        throw ValidationError("\(target) is not VERSION or VERSION:PERCENT.")
                    }
                    let version = try CheckedNumber.integer(parts[0], "VERSION", in: 1...Int(Int32.max))
                    guard parts.count == 2 || targets.count == 1 else {
                        throw ValidationError("Give each version of a rollout its percent: 7:90 8:10.")
                    }
                    let weight = try parts.count == 2 ? CheckedNumber.integer(parts[1], "PERCENT", in: 1...100) : 100
                    parsed.append(HubAliasTarget(version: version, weight: weight))
                }
                // Each percent is 1 to 100, one per argument: the sum cannot overflow.
                let sum = parsed.map(\.weight).reduce(0, +)
                guard sum == 100 else {
                    throw ValidationError(
                        "The percents of a rollout must add up to 100; \(targets.joined(separator: " ")) add up to "
                            + "\(sum) (\(parsed.map { String($0.weight) }.joined(separator: " + "))). For example: 7:90 8:10."
                    )
                }
            } catch let error as NumberOutOfRange {
                throw ValidationError("\(error) The percents of a rollout add up to 100: 7:90 8:10.")
            }
            let client = options.client
            let (name, alias, chosen, force) = (target.name, target.alias, parsed, self.force)
            let found = try await client.setAlias(alias, model: name, targets: chosen, force: force)
            if found.unchanged == true {
                return Console.print(
                    "\(found.name): \(found.alias) already serves \(found.targets.summary); nothing changed")
            }
            Console.print("\(found.name): \(found.alias) -> \(found.targets.summary)" + (try await recorded(found)))
        }

        /// What the hub recorded of a move asked with `--force`: forced (with the reason it
        /// kept) or not needed; a hub of an older release does not say in its answer, so its
        /// history does (and an older hub without gates drops the reason: said so).
        func recorded(_ moved: HubAlias) async throws -> String {
            guard force != nil else { return "" }
            if let forced = moved.forced {
                return forced
                    ? " (forced past its gate: \(moved.reason ?? "no reason kept"))"
                    : " (not forced: the versions had passed its gate, or it has none; no reason kept)"
            }
            let last = try? await options.client.history(of: target.alias, model: target.name).last
            if last?.action == "force" { return " (forced past its gate: \(last?.reason ?? "no reason kept"))" }
            return " (not forced: this hub recorded a plain move and kept no reason; an older hub knows no gates)"
        }
    }
}
