import Foundation
import NetRunner
import NetRunnerEvaluation
import NetRunnerImage
import NetRunnerTestSupport
import Synchronization
import Testing

@testable import NetRunnerJobs

/// `netrunner evaluate`'s job in process (issue 24: its folder layout, shard bookkeeping,
/// reports and merge lived in the command). The command is tested in `EvaluateCommandTests`.
@Suite("Evaluation run")
struct EvaluationRunTests {
    static let bundle = Fixtures.path("TestBundles/imagenet-sample.testbundle")

    /// The sample test with one of its models (the uint8 MobileNetV2 bundle), loaded.
    static func plan(shard: BulkShard? = nil) throws -> EvaluationRun.Plan {
        let test = try TestBundle(path: bundle)
        let model = TestBundleRunner.Model(
            id: "mobilenet-v2-1.0-224-uint8", path: Fixtures.path("Models/bundles/mobilenet_v2_1.0_224_uint8.tiobundle")
        )
        var runner = try TestBundleRunner(test: test, models: [model])
        runner.shard = shard
        return EvaluationRun.Plan(runner: runner, models: [(model, try runner.loadTask(model))])
    }

    /// What ``EvaluationRun/runResults(_:shard:restart:isCancelled:progress:)`` said was to go, and
    /// how many runs it then wrote.
    static func pendingAndWritten(_ run: EvaluationRun, _ plan: EvaluationRun.Plan) throws -> (
        pending: EvaluationRun.Pending?, written: Int
    ) {
        final class Written: Sendable {
            let count = Atomic<Int>(0)
        }
        var told: EvaluationRun.Pending?
        let written = Written()
        try run.runResults(
            plan, shard: nil, restart: false,
            progress: { pending in
                told = pending
                return { written.count.add(1, ordering: .relaxed) }
            })
        return (told, written.count.load(ordering: .relaxed))
    }

    @Test("A model added to an output folder has all its runs to go: the runs of the models before it are not its")
    func addedModelCountsItsOwnRuns() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-evaluation-run")
        defer { folder.remove() }
        let run = EvaluationRun(output: folder.path("out"), threads: 1, fastDecoding: false)
        let first = try Self.plan()
        let firstRun = try Self.pendingAndWritten(run, first)
        #expect(firstRun.pending?.runs == 24 && firstRun.pending?.resumed == false && firstRun.written == 24)

        // The same file under another id: a second model, added to the folder's evaluation (as
        // docs/hub.md's --compare after the README's evaluate). Its 24 runs are to go, not 0.
        let added = TestBundleRunner.Model(
            id: "added", path: Fixtures.path("Models/bundles/mobilenet_v2_1.0_224_uint8.tiobundle"))
        let test = try TestBundle(path: Self.bundle)
        let (model, task) = try #require(first.models.first)
        let both = EvaluationRun.Plan(
            runner: try TestBundleRunner(test: test, models: [model, added]),
            models: [(model, task), (added, try first.runner.loadTask(added))])
        let withAdded = try Self.pendingAndWritten(run, both)
        #expect(withAdded.pending?.runs == 24 && withAdded.pending?.resumed == true, "\(String(describing: withAdded))")
        #expect(withAdded.written == 24)

        // The added model alone, then the first one alone: nothing to go for either, although the
        // file holds 48 runs (24 of another model each time).
        let alone = EvaluationRun.Plan(
            runner: try TestBundleRunner(test: test, models: [added]),
            models: [(added, try first.runner.loadTask(added))])
        let again = try Self.pendingAndWritten(run, alone)
        #expect(again.pending?.runs == 0 && again.written == 0)
        #expect(try Self.pendingAndWritten(run, first).pending?.runs == 0)
        #expect(
            try BulkResultsFile.records(in: EvaluationRun.resultsPath(for: test, in: folder.path("out"))).count == 48)
    }

    @Test("Two shards merged equal one whole run, line for line; a missing shard and a whole run's file are refused")
    func shardsMergeToTheWholeRun() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-evaluation-run")
        defer { folder.remove() }
        let whole = EvaluationRun(output: folder.path("whole"), threads: 1, fastDecoding: false)
        let wholePath = try whole.runResults(try Self.plan(), shard: nil, restart: false)
        let report = try whole.report(try Self.plan(), resultsPath: wholePath)
        #expect(report.models.first?.evaluated == 8)
        var thumbnails: [ExactString: Thumbnail] = [:]
        let written = try whole.writeReports(report, test: try Self.plan().runner.test, thumbnails: &thumbnails)
        #expect(FileManager.default.fileExists(atPath: written + "/report.html"))

        var shardFolders: [String] = []
        for index in 0..<2 {
            let shard = try BulkShard(index: index, count: 2)
            let output = folder.path("shard\(index)")
            try EvaluationRun(output: output, threads: 1, fastDecoding: false)
                .runResults(try Self.plan(shard: shard), shard: shard, restart: false)
            shardFolders.append(output)
        }
        let test = try TestBundle(path: Self.bundle)
        let order = ["mobilenet-v2-1.0-224-uint8"]
        #expect(throws: BulkError.self) {
            try EvaluationRun.merge(test, shards: [shardFolders[0]], modelOrder: order, into: folder.path("one"))
        }
        let wholeResults = EvaluationRun.resultsPath(for: test, in: folder.path("whole"))
        #expect(throws: BulkError.notEvaluationShard(file: wholeResults)) {
            try EvaluationRun.merge(
                test, shards: shardFolders + [folder.path("whole")], modelOrder: order, into: folder.path("wrong"))
        }
        let merged = try EvaluationRun.merge(test, shards: shardFolders, modelOrder: order, into: folder.path("merged"))
        #expect(merged.shards == 2 && merged.runs == 24)
        let mergedPath = EvaluationRun.resultsPath(for: test, in: folder.path("merged"))
        #expect(try ResultsLines.withoutLatencies(mergedPath) == ResultsLines.withoutLatencies(wholePath))
        // A whole run's file is not resumed as a shard's.
        #expect(throws: EvaluationRun.MixedResultsError.self) {
            try whole.runResults(
                try Self.plan(shard: BulkShard(index: 0, count: 2)), shard: BulkShard(index: 0, count: 2),
                restart: false)
        }
    }
}
