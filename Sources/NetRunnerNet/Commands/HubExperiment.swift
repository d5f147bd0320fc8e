import ArgumentParser
import NetRunnerCommandLine
import NetRunnerHub
import NetRunnerSupport

/// `netrunner hub experiment`: experiments on an alias.
extension NetRunnerNetCommand.Hub {
    /// `netrunner hub experiment start|list|show|stop|conclude`.
    struct Experiment: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run an experiment on an alias: variants by weight, a goal, guardrails; stop or conclude it.",
            discussion: """
                An experiment serves its variants through the alias (production serving 7 and 8 at 50:50), each \
                client id the same variant every time, as a staged rollout; clients report outcomes, inferences \
                and crashes (POST /v1/events, a key of the report scope), and the hub compares each variant with \
                the baseline on the goal. A guardrail that trips (a variant worse than the baseline by more than \
                its margin, at the experiment's confidence) stops it and puts the alias back on the baseline. \
                Concluding makes the winner the alias's target, through the alias's gate.

                netrunner hub experiment start flowers production 7:50 8:50 --goal accepted --failure-rate 0.01
                netrunner hub experiment show flowers 1
                netrunner hub experiment conclude flowers 1 --winner 8
                """,
            subcommands: [Start.self, List.self, Show.self, Stop.self, Conclude.self])

        /// `start NAME ALIAS VERSION:PERCENT...`.
        struct Start: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Start an experiment: the alias serves the variants by weight (a publish key).")

            @Argument(help: "The model's name.")
            var name: String

            @Argument(help: "The alias.")
            var alias: String

            @Argument(help: "The variants, VERSION:PERCENT (7:50 8:50); with --aa, the baseline's version each time.")
            var variants: [String]

            @Option(help: "The version the others are compared with (default: the first variant).")
            var baseline: Int?

            @Option(help: "The outcome whose success rate is the goal.")
            var goal = "accepted"

            @Option(help: "Stop when a variant's inference failure rate is worse by more than this (0.01).")
            var failureRate: Double?

            @Option(help: "Stop when a variant's share of crashed clients is worse by more than this.")
            var crashes: Double?

            @Option(help: "Stop when a variant's latency p90 is worse by more than this many milliseconds.")
            var latencyP90Ms: Double?

            @Option(help: "Stop when a variant's goal rate is below the baseline's by more than this.")
            var goalFloor: Double?

            @Option(help: "The chance of a false decision over every look, 0.001 to 0.2.")
            var alpha = 0.05

            @Flag(help: "An A/A test: every arm serves the baseline.")
            var aa = false

            @Option(help: "What it tests, in words.")
            var description = ""

            @Flag(help: "Print JSON.")
            var json = false

            @OptionGroup var options: HubOptions

            func run() async throws {
                var parsed: [HubAliasTarget] = []
                for variant in variants {
                    let parts = variant.split(separator: ":", omittingEmptySubsequences: false)
                    guard parts.count == 2 else { throw ValidationError("\(variant) is not VERSION:PERCENT (7:50).") }
                    do {
                        parsed.append(
                            HubAliasTarget(
                                version: try CheckedNumber.integer(parts[0], "VERSION", in: 1...Int(Int32.max)),
                                weight: try CheckedNumber.integer(parts[1], "PERCENT", in: 1...100)))
                    } catch {
                        throw ValidationError(error.description)
                    }
                }
                let guardrails = HubExperimentGuardrails(
                    failureRate: failureRate, crashes: crashes, latencyP90Ms: latencyP90Ms, goalFloor: goalFloor)
                let draft = HubExperiment(
                    id: 0, name: name, alias: alias, description: description, variants: parsed,
                    baseline: baseline ?? parsed.first?.version ?? 0, goal: goal, guardrails: guardrails, alpha: alpha,
                    mode: aa ? .aa : .normal, startedAt: "", startedBy: "")
                let started = try await options.client.startExperiment(draft)
                if json { return try Console.printJSON(started) }
                Console.print(
                    "\(name): experiment \(started.id) on \(alias) started (\(started.variants.summary), baseline "
                        + "\(started.baseline), goal \(started.goal))")
            }
        }

        /// `list NAME`.
        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "List a model's experiments, the newest first.")

            @Argument(help: "The model's name.")
            var name: String

            @Flag(help: "Print JSON.")
            var json = false

            @OptionGroup var options: HubOptions

            func run() async throws {
                let experiments = try await options.client.experiments(model: name)
                if json { return try Console.printJSON(["experiments": experiments]) }
                if experiments.isEmpty { Console.print("\(name) has no experiment") }
                for experiment in experiments { Console.print(Experiment.line(experiment)) }
            }
        }

        /// `show NAME ID`.
        struct Show: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Show an experiment: each arm's figures against the baseline, and its history.")

            @OptionGroup var experiment: Reference

            @Flag(help: "Print JSON.")
            var json = false

            @OptionGroup var options: HubOptions

            func run() async throws {
                let detail = try await options.client.experiment(experiment.id, model: experiment.name)
                if json { return try Console.printJSON(detail) }
                Console.print(Experiment.line(detail.experiment))
                for arm in detail.analysis.arms { Console.print("  " + Experiment.line(arm)) }
                for change in detail.history {
                    Console.print(
                        "  \(change.sequence)  \(change.at)  \(change.by)  \(change.action)  \(change.details)")
                }
            }
        }

        /// `stop NAME ID`.
        struct Stop: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Stop an experiment: the alias goes back to the baseline (a publish key).")

            @OptionGroup var experiment: Reference

            @OptionGroup var options: HubOptions

            func run() async throws {
                let stopped = try await options.client.stopExperiment(experiment.id, model: experiment.name)
                Console.print("\(experiment): stopped; \(stopped.alias) serves \(stopped.baseline)")
            }
        }

        /// `conclude NAME ID [--winner V]`.
        struct Conclude: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Conclude an experiment: the winner becomes the alias's target, through its gate.")

            @OptionGroup var experiment: Reference

            @Option(help: "The version that won (default: the one the hub declared the winner).")
            var winner: Int?

            @OptionGroup var options: HubOptions

            func run() async throws {
                let concluded = try await options.client.concludeExperiment(
                    experiment.id, model: experiment.name, winner: winner)
                Console.print(
                    "\(experiment): concluded; \(concluded.alias) serves \(concluded.winner ?? concluded.baseline)")
            }
        }

        /// `NAME ID`: which experiment show, stop and conclude act on.
        struct Reference: ParsableArguments, CustomStringConvertible {
            @Argument(help: "The model's name.")
            var name: String

            @Argument(help: "The experiment's number.")
            var id: Int

            /// `flowers: experiment 1`, how their answers begin.
            var description: String { "\(name): experiment \(id)" }
        }

        /// One line for an experiment.
        static func line(_ experiment: HubExperiment) -> String {
            var text =
                "\(experiment.id)  \(experiment.alias)  \(experiment.status.rawValue)  \(experiment.variants.summary)  "
                + "baseline \(experiment.baseline)  goal \(experiment.goal)"
            if experiment.mode == .aa { text += "  A/A" }
            text += "  started by \(experiment.startedBy) at \(experiment.startedAt)"
            if let outcome = experiment.outcome { text += "; \(outcome)" }
            return text
        }

        /// One line for an arm's figures.
        static func line(_ arm: HubExperimentAnalysis.Arm) -> String {
            var text =
                "\(arm.version)\(arm.baseline ? " (baseline)" : "")  clients \(arm.clients)  events \(arm.events)  "
                + "goal \(HubGateRule.format(arm.goalRate)) of \(arm.outcomes)"
            if let chance = arm.chanceToBeatBaseline, let low = arm.relativeChangeLower,
                let high = arm.relativeChangeUpper
            {
                text +=
                    "  chance to beat \(HubGateRule.format(chance))  change [\(HubGateRule.format(low)), "
                    + "\(HubGateRule.format(high))]"
            }
            text += "  failures \(HubGateRule.format(arm.failureRate)) of \(arm.inferences)"
            if let p90 = arm.latencyP90Ms { text += "  latency p90 \(HubGateRule.format(p90)) ms" }
            if let decision = arm.decision { text += "  \(decision)" }
            let tripped = arm.guardrails.filter(\.tripped).map(\.metric)
            if !tripped.isEmpty { text += "  tripped: \(tripped.joined(separator: ", "))" }
            return text
        }
    }
}
