import Foundation
import NetRunner
import NetRunnerEvaluation
import NetRunnerTestSupport
import Testing

@testable import NetRunnerJobs

/// `netrunner bulk`'s job in process (issue 24: its logic lived in the command, where only a
/// spawned process could reach it). The command itself is tested in `BulkCommandTests`.
@Suite("Bulk job")
struct BulkJobTests {
    static let photos = Fixtures.path("Tests/Fixtures/Photos/test")

    static func model() throws -> LoadedModel {
        try LoadedModel(.path(Fixtures.path("Models/bundles/mobilenet_v2_1.0_224_uint8.tiobundle")))
    }

    static func job(
        output: String, files: [String], roots: [String] = [photos], shard: BulkShard? = nil,
        results: ResultOptions = ResultOptions(), retryFailed: Bool = false, threads: Int = 2
    ) throws -> BulkJob {
        var settings = BulkSettings(roots: roots, files: files, model: try model())
        settings.output = output
        settings.shard = shard
        settings.options.results = results
        settings.retryFailed = retryFailed
        settings.threads = threads
        return try BulkJob(settings)
    }

    @Test("A run writes a line per image; the same run resumes with nothing to do; another run is refused")
    func runResumeRefuse() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-bulk-job")
        defer { folder.remove() }
        let output = folder.path("results.jsonl")
        let files = ImageFiles.listing(of: [Self.photos]).files
        do {
            // The job holds the results file's lock while it lives.
            let first = try Self.job(output: output, files: files)
            #expect(first.pending.count == 4 && first.notes.isEmpty && first.kind == .classification)
            let tally = try first.run()
            #expect(tally.count == 4 && tally.failed == 0 && tally.writeError == nil)
        }
        let records = try BulkResultsFile.records(in: output)
        #expect(records.map(\.image) == files)
        let labels = records.compactMap { record -> String? in
            guard case .classification(let result)? = record.answer else { return nil }
            return result.categories.first.map { $0.displayName ?? $0.label ?? "" }
        }
        #expect(labels.contains("espresso") && labels.contains("bald eagle"), "\(labels)")

        do {
            let again = try Self.job(output: output, files: files)
            #expect(again.pending.isEmpty)
            #expect(
                again.notes == [
                    .resuming(file: output, resumed: 4, repairedPartialLine: false, pending: 0, total: 4)
                ])
        }
        #expect(throws: BulkJob.OtherRunError.self) {
            try Self.job(output: output, files: files, results: ResultOptions(maxResults: 3))
        }
    }

    @Test("A shard runs its images only; --retry-failed runs the failed ones again")
    func shardAndRetry() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-bulk-job")
        defer { folder.remove() }
        let files = ImageFiles.listing(of: [Self.photos]).files
        let shard = try BulkShard(index: 0, count: 2)
        let sharded = try Self.job(output: folder.path("shard.jsonl"), files: files, shard: shard)
        #expect(sharded.pending == files.filter { shard.contains($0, roots: [Self.photos]) })
        #expect(sharded.notes.first == .shard(shard, kept: sharded.files.count, of: files.count))

        // A run with one file that is no image: its line says it failed.
        let output = folder.path("results.jsonl")
        let broken = try folder.write(Data("not an image".utf8), named: "broken.jpg")
        do {
            let job = try Self.job(output: output, files: files + [broken], roots: [Self.photos, broken], threads: 1)
            let tally = try job.run()
            #expect(tally.count == 5 && tally.failed == 1)
        }
        let retry = try Self.job(
            output: output, files: files + [broken], roots: [Self.photos, broken], retryFailed: true)
        #expect(retry.pending == [broken])
        #expect(retry.notes.contains(.retrying(count: 1, file: output)))
    }
}
