import ArgumentParser
import FoundationEssentials
import NetRunner
import NetRunnerEngine
import NetRunnerEvaluation
import NetRunnerImage
import NetRunnerJobs
import NetRunnerSupport
import TensorFlowLite

extension NetRunnerCommand {
    /// `netrunner evaluate`: `evaluate TESTBUNDLE...` (``Tests``, the default) and `evaluate merge`.
    struct Evaluate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: Tests.configuration.abstract,
            discussion: Tests.configuration.discussion,
            subcommands: [Tests.self, Merge.self],
            defaultSubcommand: Tests.self)
    }
}

extension NetRunnerCommand.Evaluate {
    /// `netrunner evaluate TESTBUNDLE...`: Net Runner's headless mode.
    struct Tests: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "run",
            abstract: "Run Net Runner test bundles: accuracy and latency per model, as JSON and an HTML report.",
            discussion: """
                Each TESTBUNDLE is a .testbundle folder with a test.json (name, id, version, models, \
                options.iterations, options.metric, images, labels) and its images. The models it names by id are \
                found in --models (TensorIO bundles by their model.json id, .tflite files by file name). Every \
                model runs on every image, iterations times, one after another on one thread; each model first \
                runs once untimed (warm-up).

                \(Self.metricsHelp)

                Results go to OUTPUT/<test id>/: results.jsonl (one line per run; an interrupted evaluation \
                resumes from it, --restart starts afresh), report.json and report.html (self-contained: open it \
                in any browser). --compare runs the given models instead of the test's own, side by side.

                On several machines: --shard I/N runs the images whose name in test.json hashes to I (a \
                Kubernetes Indexed Job's JOB_COMPLETION_INDEX and JOB_COMPLETION_COUNT are read when set, else a \
                Slurm array task's SLURM_ARRAY_TASK_ID as the shard index of NETRUNNER_SHARD_COUNT, see \
                deploy/slurm) and \
                writes only results; `netrunner evaluate merge TESTBUNDLE... --shards DIR... --output DIR` joins \
                the shards' results and writes the reports one machine would have written.
                """)

        /// The metrics a test may name, task by task, from the evaluations registered
        /// (`TaskEvaluationRegistry`): a task added there is listed here too.
        static var metricsHelp: String {
            let tasks = TaskEvaluationRegistry.all.map { evaluation in
                "\(evaluation.kind.rawValue): \(evaluation.metricNames.joined(separator: " / ")) (labels: \(evaluation.labelForm))"
            }
            return "Metrics, by task: " + tasks.joined(separator: "; ")
                + ". docs/bulk-and-evaluation.md defines them and their labels."
        }

        @Argument(help: "Test bundle folders (.testbundle).")
        var testBundles: [String] = []

        @Option(help: "The folder of models the tests name by id (\(ModelsFolder.help)).")
        var models: String?

        @Option(
            name: .customLong("compare"),
            help: "Run this model (an id in --models, or a path) instead of the test's models; repeat to compare.")
        var compare: [String] = []

        @Option(name: .shortAndLong, help: "Where results and reports go.")
        var output = "netrunner-evaluation"

        @Option(
            name: .customLong("runtime-threads"), parsing: .unconditional,
            help:
                "Threads inside each model's interpreter: the runtime's (XNNPACK's) CPU threads (default: 1; images run one at a time, for timing)."
        )
        var runtimeThreads: Int?

        /// The old spelling of `--runtime-threads`, still accepted.
        @Option(name: [.customShort("t"), .customLong("threads")], parsing: .unconditional, help: .hidden)
        var legacyThreads: Int?

        /// The threads inside each model's interpreter.
        var threads: Int { runtimeThreads ?? legacyThreads ?? 1 }

        @Flag(
            name: .customLong("fast-decoding"),
            help: "Scale large JPEGs while decoding, as bulk does (faster; inputs differ slightly from a full decode).")
        var fastDecoding = false

        @Option(
            help: ArgumentHelp(
                "Where the models run: cpu, gpu or auto (default: cpu). Repeat it to run every model on each, side by side: --accelerator cpu --accelerator gpu reports MODEL@cpu and MODEL@gpu, with the GPU's agreement with the CPU.",
                valueName: "cpu|gpu|auto"))
        var accelerator: [Accelerator] = []

        @Flag(help: "Start the results afresh instead of resuming them.")
        var restart = false

        @Flag(name: .customLong("no-progress"), help: "Never draw the progress bar.")
        var noProgress = false

        @Option(
            help: ArgumentHelp(
                "Run only shard I of N (from 0): the images whose name in test.json hashes to I; results only, no report (default: a Kubernetes pod's JOB_COMPLETION_INDEX of JOB_COMPLETION_COUNT, else a Slurm array task's SLURM_ARRAY_TASK_ID of NETRUNNER_SHARD_COUNT, so a requeued or resubmitted task reruns its shard; without NETRUNNER_SHARD_COUNT, the task's place in a dense array).",
                valueName: "i/n"))
        var shard: String?

        func validate() throws {
            guard !testBundles.isEmpty else { throw ValidationError("Name at least one .testbundle folder.") }
            if let runtimeThreads { try OptionLimits.checkThreads(runtimeThreads, flag: "--runtime-threads") }
            if let legacyThreads { try OptionLimits.checkThreads(legacyThreads) }
            if let shard { try FlagAdvice.checking { _ = try BulkShard(parsing: shard) } }
        }

        func run() async throws {
            try await settings.evaluate(shard: try BulkShard.chosen(option: shard))
        }

        /// The flags, as the evaluation's settings.
        var settings: NetRunnerCommand.Evaluate.Settings {
            .init(
                testBundles: testBundles, models: models, compare: compare, output: output, threads: threads,
                fastDecoding: fastDecoding, accelerator: accelerator, restart: restart, noProgress: noProgress)
        }

        /// A model named by a test or by --compare: a path as given, else an id in the models folder.
        fileprivate static func resolve(
            _ name: String, in directory: ModelDirectory?, file: String
        ) throws -> TestBundleRunner.Model {
            if FileManager.default.fileExists(atPath: name) {
                return .init(id: ModelDirectory.id(ofModelAt: name), path: name)
            }
            guard let directory else {
                throw EvaluationError.invalidTest(
                    file: file, reason: "names model \"\(name)\" and no models folder was found")
            }
            return .init(id: name, path: try directory.path(forModel: name, in: file))
        }

        /// A model `--compare` names, as `--model` names one: a path first, then `hub:NAME[@REF]`,
        /// then an id in the models folder; an unknown name is one message listing the ids, the
        /// closest first.
        fileprivate static func resolve(compared name: String, in directory: ModelDirectory?) async throws
            -> TestBundleRunner.Model
        {
            if ModelCatalog.exists(name) { return .init(id: ModelDirectory.id(ofModelAt: name), path: name) }
            if HubReference.isHubModel(name) {
                // Recorded as NAME@REF: the hub's file is named by its digest.
                return .init(id: String(name.dropFirst("hub:".count)), path: try await HubReference.localPath(name))
            }
            if let directory, let path = directory.models[name] { return .init(id: name, path: path) }
            var ids = directory.map { $0.models.keys.sorted() } ?? []
            let closest = closestMatch(to: name, in: ids)
            if let closest {
                ids.removeAll { $0 == closest }
                ids.insert(closest, at: 0)
            }
            var message = "--compare \(name): no such file, and no model in "
            message += directory.map { "--models \($0.path)" } ?? "a models folder"
            message += " has that id" + (closest.map { " (did you mean \($0)?)" } ?? "")
            message += ids.isEmpty ? " (no models there)" : "; the ids: \(ids.joined(separator: ", "))"
            message += "; or give a path, or hub:NAME[@VERSION|@ALIAS]."
            throw ValidationError(message)
        }

        /// The ids with repeats told apart: the second model of an id is `ID#2`, the third `ID#3`
        /// (two versions of one model share their `model.json` id, and their results would
        /// otherwise be counted as one model's).
        static func distinct(_ ids: [String]) -> [String] {
            var seen: [String: Int] = [:]
            return ids.map { id in
                seen[id, default: 0] += 1
                return seen[id] == 1 ? id : "\(id)#\(seen[id] ?? 1)"
            }
        }

        /// Each model once per accelerator: ids suffixed `@cpu`, `@gpu` when there are several.
        static func expand(_ entries: [TestBundleRunner.Model], accelerators: [Accelerator]) -> [TestBundleRunner.Model]
        {
            var unique: [Accelerator] = []
            for accelerator in accelerators where !unique.contains(accelerator) { unique.append(accelerator) }
            guard unique.count > 1 else {
                return entries.map {
                    TestBundleRunner.Model(id: $0.id, path: $0.path, accelerator: unique.first ?? .cpu)
                }
            }
            return entries.flatMap { entry in
                unique.map { TestBundleRunner.Model(id: "\(entry.id)@\($0)", path: entry.path, accelerator: $0) }
            }
        }

        fileprivate static func printSummary(_ report: EvaluationReport) {
            let test = report.test
            Console.print(
                "\(test.name) (\(test.id) v\(test.version)): \(test.images) images x \(test.iterations) iterations, "
                    + "metric \(test.metric)")
            for model in report.models {
                var line = "  \(model.id): \(model.evaluated)/\(model.images) images"
                for (key, value) in model.metric.sorted(by: { $0.key < $1.key }) {
                    line += ", \(key) \(Console.format(value, decimals: 3))"
                }
                if let scores = model.classification {
                    line += ", top-1 \(Console.format(scores.top1 * 100, decimals: 1))%"
                    line += ", top-5 \(Console.format(scores.top5 * 100, decimals: 1))%"
                }
                let stages = model.latency.stages
                if let inference = stages.inference { line += "; inference ms \(inference.text)" }
                if let total = stages.total { line += "; total mean \(Console.format(total.mean, decimals: 2))" }
                if !model.failures.isEmpty { line += "; \(model.failures.count) failed" }
                if let agreement = model.agreement {
                    line +=
                        "; agrees with \(agreement.baseline) on \(Console.format(agreement.top1 * 100, decimals: 1))%"
                    line += " of \(agreement.images) images"
                    if let difference = agreement.maxTop1ScoreDifference {
                        line += " (top-1 score within \(Console.format(difference, decimals: 4)))"
                    }
                }
                Console.print(line)
            }
            Console.print("  (\(report.latencyNote))")
        }
    }
}

extension NetRunnerCommand.Evaluate {
    /// What an evaluation runs with, whichever command's flags gave it: `evaluate` runs what its
    /// results lack, then writes the reports; `evaluate merge` writes the reports of the merged
    /// shards, with nothing left to run.
    struct Settings {
        /// The test bundle folders.
        var testBundles: [String]
        /// `--models`: the folder of models the tests name by id (else ``ModelsFolder``'s).
        var models: String?
        /// The models run instead of the tests' own, if any.
        var compare: [String]
        /// Where results and reports go.
        var output: String
        /// The threads inside each model's interpreter.
        var threads = 1
        /// Whether large JPEGs are scaled while decoding.
        var fastDecoding = false
        /// Where the models run (several: side by side).
        var accelerator: [Accelerator] = []
        /// Whether the results start afresh.
        var restart = false
        /// Whether the progress bar is never drawn.
        var noProgress = false

        /// Runs what the tests' results files lack and writes the reports; for a shard, the results
        /// only.
        ///
        /// - Parameter shard: The shard to run, or `nil` for the whole tests.
        /// - Throws: The tests', models' and results files' errors; `ExitCode.failure` when a run
        ///   failed; the interruption's exit code.
        func evaluate(shard: BulkShard?) async throws {
            // Everything is checked before anything runs: a bad test or model is one clear error.
            let tests = try testBundles.map { try TestBundle(path: $0) }
            let needsDirectory =
                compare.isEmpty
                || !compare.allSatisfy { ModelCatalog.exists($0) || HubReference.isHubModel($0) }
            var directory: ModelDirectory?
            if needsDirectory {
                let folder = try ModelsFolder.resolve(flag: models)?.path
                let installed = ModelCatalog.installedFolder
                guard folder.map(ImageArguments.isDirectory) ?? (installed != nil) else {
                    throw ValidationError(
                        "\(models.map { "--models \($0)" } ?? "No models folder"): no such folder. The models a test "
                            + "names by id are looked up there (\(ModelsFolder.precedence)); give the folder with "
                            + "--models DIR, or a model's path with --compare.")
                }
                // The folder's models, then the installed ones under ids the folder lacks.
                for path in [folder, installed].compactMap({ $0 }) {
                    let found = try ModelDirectory(path: path)
                    if directory == nil { directory = found } else { directory?.addModels(of: found) }
                }
            }
            var plans: [EvaluationRun.Plan] = []
            for test in tests {
                let file = test.descriptionPath
                var entries: [TestBundleRunner.Model] = []
                if compare.isEmpty {
                    entries = try test.description.models.map { try Tests.resolve($0, in: directory, file: file) }
                } else {
                    for name in compare { entries.append(try await Tests.resolve(compared: name, in: directory)) }
                }
                for (index, id) in Tests.distinct(entries.map(\.id)).enumerated() { entries[index].id = id }
                entries = Tests.expand(entries, accelerators: accelerator)
                var runner = try TestBundleRunner(
                    test: test, models: entries, threadCount: threads, exactDecoding: !fastDecoding)
                runner.shard = shard
                let loaded = try entries.map { ($0, try runner.loadTask($0)) }
                for (entry, task) in loaded {
                    for (label, closest) in runner.unknownLabels(for: task) {
                        Console.diagnostic(
                            "warning: \(file): label \"\(label)\" is not one of model \(entry.id)'s labels"
                                + (closest.map { " (closest: \"\($0)\")" } ?? "")
                                + "; images expecting only it can never be scored correct.")
                    }
                }
                plans.append(EvaluationRun.Plan(runner: runner, models: loaded))
            }
            try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
            let run = EvaluationRun(output: output, threads: threads, fastDecoding: fastDecoding)
            var reports: [EvaluationReport] = []
            var thumbnails: [ExactString: Thumbnail] = [:]
            var failedImages = 0
            var failedRuns = 0
            var failedModels = 0
            if let shard {
                for plan in plans {
                    let path = try runResults(plan, with: run, shard: shard)
                    failedRuns += try BulkResultsFile.records(in: path).filter { $0.error != nil }.count
                    Console.print("\(plan.runner.test.description.name): shard \(shard), results in \(path)")
                }
                Console.print(
                    "Join the shards with: netrunner evaluate merge TESTBUNDLE... --shards DIR... --output DIR")
                if failedRuns > 0 { throw ExitCode.failure }
                return
            }
            for plan in plans {
                let report = try run.report(plan, resultsPath: try runResults(plan, with: run, shard: nil))
                reports.append(report)
                Tests.printSummary(report)
                let failures = report.models.map(\.failures)
                failedRuns += failures.map(\.count).reduce(0, +)
                failedImages += Set(failures.flatMap { $0.map(\.image) }).count
                failedModels += failures.filter { !$0.isEmpty }.count
                let folder = try run.writeReports(report, test: plan.runner.test, thumbnails: &thumbnails)
                Console.print("  report: \(folder)/report.html, \(folder)/report.json")
            }
            if reports.count > 1 {
                Console.print("All tests: \(try run.writeCombinedReport(reports, thumbnails: thumbnails))")
            }
            if failedImages > 0 {
                Console.diagnostic(
                    "\(failedImages) image\(failedImages == 1 ? "" : "s") could not be evaluated "
                        + "(\(failedRuns) run\(failedRuns == 1 ? "" : "s") failed, under \(failedModels) "
                        + "model\(failedModels == 1 ? "" : "s")); they are listed in the reports.")
                throw ExitCode.failure
            }
        }

        /// Runs what a test's results file lacks, with a progress bar.
        ///
        /// Ctrl-C stops with whole lines (exit 130). Returns the file's path.
        private func runResults(_ plan: EvaluationRun.Plan, with run: EvaluationRun, shard: BulkShard?) throws -> String
        {
            let interrupted = Interruption()
            let name = plan.runner.test.description.name
            let noProgress = self.noProgress
            var bar: ProgressBar?
            let path: String
            do {
                path = try run.runResults(
                    plan, shard: shard, restart: restart, isCancelled: { interrupted.happened },
                    progress: { pending in
                        if pending.resumed {
                            Console.diagnostic("\(name): resuming \(pending.path), \(pending.runs) runs to go.")
                        }
                        let progress = ProgressBar(total: pending.runs, unit: "runs", enabled: !noProgress)
                        bar = progress
                        return { progress.advance() }
                    })
            } catch let error as EvaluationRun.MixedResultsError {
                throw ValidationError(FlagAdvice.message(for: error) ?? "\(error)")
            }
            bar?.finish()
            if interrupted.happened {
                Console.diagnostic("Interrupted; rerun the same command to resume from \(path).")
                throw ExitCode(interrupted.exitCode)
            }
            return path
        }
    }
}

extension NetRunnerCommand.Evaluate {
    /// `netrunner evaluate merge TESTBUNDLE... --shards DIR...`: the shards' results as one run's,
    /// then the reports.
    struct Merge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Join the results of evaluate --shard runs and write the reports one machine would have.",
            discussion: """
                Each --shards DIR is the --output of one shard's evaluate run; every shard must be given once. \
                The merged results go to OUTPUT/<test id>/results.jsonl in the order one machine runs them, then \
                the reports are written as evaluate writes them (nothing is run again).
                """)

        @Argument(help: "The test bundle folders the shards ran.")
        var testBundles: [String] = []

        @Option(name: .customLong("shards"), help: "A shard's output folder (repeat for every shard).")
        var shards: [String] = []

        @Option(help: "The folder of models the tests name by id (\(ModelsFolder.help)).")
        var models: String?

        @Option(name: .customLong("compare"), help: "The models the shards ran with --compare, in the same order.")
        var compare: [String] = []

        @Option(name: .shortAndLong, help: "Where the merged results and the reports go.")
        var output = "netrunner-evaluation"

        func validate() throws {
            guard !testBundles.isEmpty else { throw ValidationError("Name the test bundles the shards ran.") }
            guard !shards.isEmpty else { throw ValidationError("Name every shard's output folder with --shards.") }
        }

        func run() async throws {
            for path in testBundles {
                let test = try TestBundle(path: path)
                let order =
                    compare.isEmpty
                    ? test.description.models : Tests.distinct(compare.map { ModelDirectory.id(ofModelAt: $0) })
                let merged = try EvaluationRun.merge(test, shards: shards, modelOrder: order, into: output)
                Console.diagnostic("Merged \(merged.shards) shards of \(test.description.name): \(merged.runs) runs.")
            }
            // The reports, as evaluate writes them: every run is in the results, nothing runs again.
            let reports = NetRunnerCommand.Evaluate.Settings(
                testBundles: testBundles, models: models, compare: compare, output: output, noProgress: true)
            try await reports.evaluate(shard: nil)
        }
    }
}
