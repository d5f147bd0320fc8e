import FoundationEssentials
package import NetRunner
package import NetRunnerEvaluation
package import NetRunnerImage
import NetRunnerSupport

/// `netrunner evaluate`'s job: Net Runner test bundles through models, each test's runs in
/// `OUTPUT/<test>/results.jsonl` (resumed when run again, a shard's kept apart from a whole
/// run's), its `report.json` and `report.html`, and a combined report for several tests; the
/// shards of a sharded evaluation merged into the file one machine would have written.
///
///     let run = EvaluationRun(output: "out/evaluation", threads: 1, fastDecoding: false)
///     let report = try run.evaluate(plan, restart: false)
///     try run.writeReports(report, test: plan.runner.test)
package struct EvaluationRun: Sendable {
    /// One test and the models it runs, each loaded into its task.
    package struct Plan {
        /// The test's runner.
        package var runner: TestBundleRunner
        /// The models and their tasks.
        package var models: [(TestBundleRunner.Model, ImageTask)]

        /// Creates a plan.
        ///
        /// - Parameters:
        ///   - runner: The test's runner.
        ///   - models: The models and their tasks.
        package init(runner: TestBundleRunner, models: [(TestBundleRunner.Model, ImageTask)]) {
            self.runner = runner
            self.models = models
        }
    }

    /// A results file that holds other runs (a shard's, or a whole evaluation's).
    package struct MixedResultsError: Error, CustomStringConvertible {
        /// The results file.
        package var file: String
        /// The shard the file holds, or `nil` for a whole evaluation.
        package var recorded: String?
        /// The shard of this run, or `nil`.
        package var asked: String?
        /// What happened (the command line adds how to start afresh or write elsewhere).
        package var description: String {
            "\(file) holds the runs of \(recorded.map { "shard \($0)" } ?? "a whole evaluation"); this is "
                + "\(asked.map { "shard \($0)" } ?? "a whole evaluation")."
        }
    }

    /// Where results and reports go.
    package let output: String
    /// The threads inside each model's interpreter (for the reports' latency note).
    package let threads: Int
    /// Whether large JPEGs are scaled while decoding (for the latency note).
    package let fastDecoding: Bool

    /// Creates a run.
    ///
    /// - Parameters:
    ///   - output: Where results and reports go.
    ///   - threads: The threads inside each interpreter.
    ///   - fastDecoding: Whether JPEGs are scaled while decoding.
    package init(output: String, threads: Int, fastDecoding: Bool) {
        self.output = output
        self.threads = threads
        self.fastDecoding = fastDecoding
    }

    /// The output folder of a test: its id when that is a safe name, else a readable slug and
    /// the first 8 hex digits of the id's SHA-256, so ids that differ only in punctuation never
    /// share a folder (or each other's results).
    ///
    /// - Parameters:
    ///   - test: The test.
    ///   - output: The evaluation's output folder.
    /// - Returns: The test's folder.
    package static func folder(for test: TestBundle, in output: String) -> String {
        let id = test.description.id
        let safe = String(
            id.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") ? $0 : "_" })
        guard safe != id || id.isEmpty else { return output + "/" + safe }
        return output + "/" + safe.prefix(64) + "-" + SHA256.hexDigest(of: Data(id.utf8)).prefix(8)
    }

    /// A test's results file.
    ///
    /// - Parameters:
    ///   - test: The test.
    ///   - output: The evaluation's output folder.
    /// - Returns: `OUTPUT/<test>/results.jsonl`.
    package static func resultsPath(for test: TestBundle, in output: String) -> String {
        folder(for: test, in: output) + "/results.jsonl"
    }

    /// How many runs a test's results file still lacks, and whether it was resumed.
    package struct Pending: Sendable {
        /// The results file.
        package var path: String
        /// The runs to go.
        package var runs: Int
        /// Whether earlier results were found and kept.
        package var resumed: Bool
    }

    /// Runs what a test's results file lacks (resuming it unless `restart`).
    ///
    /// - Parameters:
    ///   - plan: The test and its models.
    ///   - shard: The shard to run, or `nil` for the whole test.
    ///   - restart: Whether to start the file afresh.
    ///   - isCancelled: Whether to stop (Ctrl-C); the file then holds whole lines only.
    ///   - progress: Told once what is to go, before anything runs; returns what to call after
    ///     each run is written.
    /// - Returns: The results file's path.
    /// - Throws: ``MixedResultsError``; the errors of the results file and of the runs.
    @discardableResult
    package func runResults(
        _ plan: Plan, shard: BulkShard?, restart: Bool, isCancelled: @escaping @Sendable () -> Bool = { false },
        progress: (Pending) -> @Sendable () -> Void = { _ in {} }
    ) throws -> String {
        let runner = plan.runner
        let folder = Self.folder(for: runner.test, in: output)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let resultsPath = folder + "/results.jsonl"
        // A shard's results say which shard they are: never mixed with another's or a whole run's.
        let recorded = restart ? nil : try BulkRunIdentity.read(for: resultsPath)?[.shard]
        if !restart, FileManager.default.fileExists(atPath: resultsPath), recorded != shard?.description {
            throw MixedResultsError(file: resultsPath, recorded: recorded, asked: shard?.description)
        }
        let results = try BulkResultsFile(path: resultsPath, format: .jsonLines, resume: !restart)
        let sidecar = BulkRunIdentity.sidecar(for: resultsPath)
        if let shard {
            try BulkRunIdentity(
                modelSHA256: "", model: runner.test.description.id,
                options: [BulkRunIdentity.Option.shard: shard.description],
                roots: [runner.test.path]
            ).write(for: resultsPath)
        } else if FileManager.default.fileExists(atPath: sidecar) {
            try FileManager.default.removeItem(atPath: sidecar)
        }
        let done = results.completedKeys
        // Counted, not planned: a million iterations must not be listed in memory. Only the
        // plan's models' runs count as done: the file may also hold those of models an earlier
        // evaluation into the same folder ran (a model added, or one left out, this time).
        let pending = plan.models.reduce(0) { sum, model in
            sum + runner.runsPerModel - runner.recordedRuns(of: model.0, in: done)
        }
        let advanced = progress(Pending(path: resultsPath, runs: pending, resumed: results.resumedCount > 0))
        for (model, task) in plan.models {
            try runner.run(
                model, task: task, skipping: done, isCancelled: isCancelled,
                deliver: { record in
                    try results.append(record)
                    advanced()
                })
        }
        return resultsPath
    }

    /// A test's report from its results file (complete once ``runResults(_:shard:restart:isCancelled:progress:)``
    /// ran it whole).
    ///
    /// - Parameters:
    ///   - plan: The test and its models.
    ///   - resultsPath: Its results file.
    /// - Returns: The report.
    /// - Throws: The results file's errors.
    package func report(_ plan: Plan, resultsPath: String) throws -> EvaluationReport {
        EvaluationReport.build(
            test: plan.runner.test, metric: plan.runner.metric,
            models: plan.models.map { (id: $0.0.id, path: $0.0.path, kind: $0.1.kind) },
            records: try BulkResultsFile.records(in: resultsPath),
            latencyNote: "one run at a time on \(threads) thread\(threads == 1 ? "" : "s"); "
                + "each model ran once untimed before timing (warm-up); "
                + (fastDecoding ? "JPEGs scaled while decoding" : "every JPEG pixel decoded"))
    }

    /// Writes a test's `report.html` (with thumbnails of the images it shows) and
    /// `report.json`, atomically.
    ///
    /// - Parameters:
    ///   - report: The report.
    ///   - test: The test.
    ///   - thumbnails: Thumbnails made so far, by image; this test's are added.
    /// - Returns: The folder written to.
    /// - Throws: The file system's errors.
    @discardableResult
    package func writeReports(
        _ report: EvaluationReport, test: TestBundle, thumbnails: inout [ExactString: Thumbnail]
    ) throws -> String {
        for model in report.models {
            for example in model.shownExamples where thumbnails[ExactString(example.image)] == nil {
                let source = test.description.images.first { $0.key == example.image }
                if let path = source.flatMap(test.localPath(of:)) {
                    thumbnails[ExactString(example.image)] = Thumbnail.make(path: path)
                }
            }
        }
        let folder = Self.folder(for: test, in: output)
        try FileIO.writeAtomically(
            Data(HTMLReport.render([report], thumbnails: thumbnails, title: report.test.name).utf8),
            to: folder + "/report.html")
        let json = try JSONCoding.encoder(pretty: true).encode(report)
        try FileIO.writeAtomically(
            Data((String(decoding: json, as: UTF8.self) + "\n").utf8), to: folder + "/report.json")
        return folder
    }

    /// Writes `OUTPUT/report.html` over several tests.
    ///
    /// - Parameters:
    ///   - reports: The tests' reports.
    ///   - thumbnails: Their thumbnails.
    /// - Returns: The file written.
    /// - Throws: The file system's errors.
    @discardableResult
    package func writeCombinedReport(_ reports: [EvaluationReport], thumbnails: [ExactString: Thumbnail]) throws
        -> String
    {
        let path = output + "/report.html"
        try FileIO.writeAtomically(Data(HTMLReport.render(reports, thumbnails: thumbnails).utf8), to: path)
        return path
    }

    /// Joins the shards' results of one test into `OUTPUT/<test>/results.jsonl`, in the order
    /// one machine runs them; every shard must be given once.
    ///
    /// - Parameters:
    ///   - test: The test.
    ///   - shards: Each shard's output folder.
    ///   - modelOrder: The models' ids in the order the shards ran them.
    ///   - output: Where the merged results go.
    /// - Returns: The shards and runs merged.
    /// - Throws: ``BulkError/unmergeable(file:reason:)`` naming the file (a shard missing or
    ///   given twice, shards of different counts), ``BulkError/notEvaluationShard(file:)`` for a
    ///   file that is no shard's.
    package static func merge(
        _ test: TestBundle, shards: [String], modelOrder: [String], into output: String
    ) throws -> (shards: Int, runs: Int) {
        var parts: [(file: String, records: [ResultsLine])] = []
        var indexes: [Int: String] = [:]
        var count: Int?
        for shardFolder in shards {
            let file = resultsPath(for: test, in: shardFolder)
            guard let text = try BulkRunIdentity.read(for: file)?[.shard] else {
                throw BulkError.notEvaluationShard(file: file)
            }
            let shard = try BulkShard(parsing: text)
            if let count, count != shard.count {
                throw BulkError.unmergeable(file: file, reason: "it is shard \(shard), not of \(count)")
            }
            count = shard.count
            if let earlier = indexes[shard.index] {
                throw BulkError.unmergeable(file: file, reason: "shard \(shard) is also in \(earlier)")
            }
            indexes[shard.index] = file
            parts.append((file, try BulkResultsFile.records(in: file)))
        }
        let total = count ?? 0
        let missing = (0..<total).filter { indexes[$0] == nil }
        guard missing.isEmpty else {
            throw BulkError.unmergeable(
                file: test.path,
                reason: "shard\(missing.count == 1 ? "" : "s") "
                    + missing.map { "\($0)/\(total)" }.joined(separator: ", ") + " missing")
        }
        let merged = try TestBundleRunner(test: test, models: []).merge(parts, modelOrder: modelOrder)
        let folder = folder(for: test, in: output)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let text = merged.map { BulkResultsFile.Format.jsonLines.line(for: $0) }.joined()
        let path = folder + "/results.jsonl"
        try FileIO.writeAtomically(Data(text.utf8), to: path)
        if FileManager.default.fileExists(atPath: BulkRunIdentity.sidecar(for: path)) {
            try FileManager.default.removeItem(atPath: BulkRunIdentity.sidecar(for: path))
        }
        return (total, merged.count)
    }
}
