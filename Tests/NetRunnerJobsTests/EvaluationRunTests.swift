import Foundation
import NetRunner
import NetRunnerEvaluation
import NetRunnerImage
import NetRunnerTestSupport
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
