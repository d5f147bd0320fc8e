import Foundation
import NetRunnerTestSupport
import Testing

/// `netrunner check` holds models to `--max-model-memory` as `import`, `serve` and `hub serve`
/// do (issue 54): before, it accepted the 460-byte model of an 88 MB tensor that `import
/// --max-model-memory 64` refuses, so "check, then import" disagreed.
@Suite("check --max-model-memory")
struct CheckModelMemoryTests {
    static let huge = Fixtures.path("Tests/Fixtures/Hostile/tile_88mb.tflite")

    @Test("check refuses a tiny model of a huge tensor under 64 MiB in import's words, accepts it under 1024")
    func checkHoldsToTheLimit() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let cache = ["NETRUNNER_CACHE_DIR": folder.path("cache")]
        let words = "declares 85 MiB of tensors; the check allows 64 MiB, this process's limit (--max-model-memory)"
        let refused = try ProcessResult.run(
            Fixtures.netrunner, ["check", Self.huge, "--max-model-memory", "64"], environment: cache)
        #expect(refused.status == 1, "\(refused.stdout) \(refused.stderr)")
        #expect(refused.stdout.contains("rejected  \(Self.huge): "), "\(refused.stdout)")
        #expect(refused.stdout.contains(words), "\(refused.stdout)")
        // The same words as import's refusal of the same file under the same limit.
        let imported = try ProcessResult.run(
            Fixtures.netrunner, ["import", Self.huge, "--models", folder.path("models"), "--max-model-memory", "64"],
            environment: cache)
        #expect(imported.status != 0 && imported.stderr.contains(words), "\(imported.stderr)")

        let accepted = try ProcessResult.run(
            Fixtures.netrunner, ["check", Self.huge, "--max-model-memory", "1024"], environment: cache)
        #expect(accepted.status == 0, "\(accepted.stdout) \(accepted.stderr)")
        #expect(accepted.stdout == "accepted  \(Self.huge)\n", "\(accepted.stdout)")
    }

    @Test("check takes import's default (512 MiB) and its range; 0 is no limit")
    func defaultAndRange() throws {
        let model = Fixtures.path(Fixtures.MobileNet.int8)
        let plain = try ProcessResult.run(Fixtures.netrunner, ["check", model])
        #expect(plain.status == 0 && plain.stdout.hasPrefix("accepted"), "\(plain.stdout) \(plain.stderr)")
        let unlimited = try ProcessResult.run(Fixtures.netrunner, ["check", Self.huge, "--max-model-memory", "0"])
        #expect(unlimited.status == 0, "\(unlimited.stdout) \(unlimited.stderr)")
        let negative = try ProcessResult.run(Fixtures.netrunner, ["check", model, "--max-model-memory", "-1"])
        #expect(negative.status == 64 && negative.stderr.contains("--max-model-memory"), "\(negative.stderr)")
        let help = try ProcessResult.run(Fixtures.netrunner, ["check", "--help"])
        #expect(help.stdout.contains("--max-model-memory"), "\(help.stdout)")
    }
}
