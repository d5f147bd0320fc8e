import ArgumentParser
import NetRunnerCommandLine
import NetRunnerHub

/// `netrunner hub gate`: what a version must pass before an alias may point to it.
extension NetRunnerNetCommand.Hub {
    /// `netrunner hub gate NAME [ALIAS] [--bundle B]... [--rule R]... [--remove]`.
    struct Gate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show or set what a version must pass before an alias may point to it.",
            discussion: """
                With --bundle and --rule, sets ALIAS's gate (an admin key): every version is evaluated on the \
                test bundles (folders of the hub's --test-bundles) beside the version the alias serves now \
                (the baseline), as netrunner evaluate --compare runs them, and the alias then moves only to \
                versions that passed every rule; a version published with --alias ALIAS moves it once it \
                passes. A rule is MLflow's MetricThreshold: METRIC:threshold=X,min_absolute_change=X,\
                min_relative_change=X (greater_is_better=false turns them). Metrics: top1, top5, \
                classification_accuracy, mAP50, mAP50to95, pck, oks, mean_iou, pixel_accuracy, recall@K (the \
                evaluation's), latency_p50_ms, latency_p90_ms, agreement (top-1 agreement with the baseline) \
                and size_bytes.

                netrunner hub gate flowers production --bundle flowers-test \\
                    --rule classification_accuracy:min_absolute_change=-0.02 --rule agreement:threshold=0.85 \\
                    --rule latency_p50_ms:min_relative_change=-0.2
                """)

        @Argument(help: "The model's name.")
        var name: String

        @Argument(help: "The alias (all the model's gates without it).")
        var alias: String?

        @Option(help: "A test bundle of the hub's --test-bundles folder (repeat for several).")
        var bundle: [String] = []

        @Option(help: "A rule, METRIC:threshold=X,min_absolute_change=X,min_relative_change=X (repeat).")
        var rule: [String] = []

        @Flag(help: "Remove the alias's gate and its evaluations.")
        var remove = false

        @Flag(help: "Print JSON.")
        var json = false

        @OptionGroup var options: HubOptions

        func validate() throws {
            if (!bundle.isEmpty || !rule.isEmpty || remove) && alias == nil {
                throw ValidationError("Name the ALIAS whose gate to set or remove.")
            }
            if remove && (!bundle.isEmpty || !rule.isEmpty) {
                throw ValidationError("Give --remove alone, or --bundle and --rule to set the gate.")
            }
            if bundle.isEmpty != rule.isEmpty {
                throw ValidationError("A gate needs both: at least one --bundle and at least one --rule.")
            }
            for text in rule {
                do { _ = try HubGateRule(parsing: text) } catch { throw ValidationError(error.description) }
            }
        }

        func run() async throws {
            let client = options.client
            let (name, alias, bundles, json) = (self.name, self.alias, self.bundle, self.json)
            let rules = try rule.map { try HubGateRule(parsing: $0) }
            if remove, let alias {
                try await client.removeGate(alias, model: name)
                return Console.print("\(name): the gate on \(alias) is removed")
            }
            if let alias, !bundles.isEmpty {
                let gate = try await client.setGate(alias, model: name, bundles: bundles, rules: rules)
                if json { return try Console.printJSON(gate) }
                return Console.print(
                    "\(name): gate on \(alias) set (revision \(gate.revision)); every version is evaluated again "
                        + "(netrunner hub show \(name))")
            }
            let gates = try await client.gates(model: name).filter { alias == nil || $0.alias == alias }
            if json { return try Console.printJSON(["gates": gates]) }
            if gates.isEmpty { Console.print("\(name) has no gate" + (alias.map { " on \($0)" } ?? "")) }
            for gate in gates {
                Console.print("\(gate.alias) (revision \(gate.revision), by \(gate.updatedBy) at \(gate.updatedAt))")
                Console.print("  bundles: \(gate.bundles.joined(separator: ", "))")
                for rule in gate.rules { Console.print("  rule: \(rule)") }
            }
        }

        /// One line for a version's evaluation: status, metrics beside the baseline's, failures.
        static func summary(_ evaluation: HubEvaluation) -> String {
            var text = "\(evaluation.alias): \(evaluation.status.rawValue)"
            if let baseline = evaluation.baseline { text += " against \(baseline)" }
            for (bundle, metrics) in evaluation.metrics.sorted(by: { $0.key < $1.key }) {
                let base = evaluation.baselineMetrics[bundle] ?? [:]
                let shown = metrics.keys.sorted().filter { $0 != "size_bytes" }.map { key in
                    let value = HubGateRule.format(metrics[key] ?? 0)
                    return base[key].map { "\(key) \(value) (\(HubGateRule.format($0)))" } ?? "\(key) \(value)"
                }
                text += "; \(bundle): " + shown.joined(separator: ", ")
            }
            if !evaluation.failures.isEmpty {
                text += "; failed: " + evaluation.failures.map(\.reason).joined(separator: "; ")
            }
            if let message = evaluation.message { text += "; \(message)" }
            return text
        }
    }
}
