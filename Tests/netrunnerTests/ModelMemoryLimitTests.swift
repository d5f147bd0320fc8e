import Foundation
import NetRunner
import NetRunnerTestSupport
import Testing

/// Issue 43, finding 5: a 1,068-byte model that tiles one value into a [1,4096,4096,21] map
/// passed the model gate (which looked for crashes and hangs only) and left `serve` at 4.2 GB.
/// The gate's check process now measures what a model takes when loaded and run once, and
/// `serve`, `import` and `hub serve` refuse one above `--max-model-memory` before serving or
/// storing it. The fixture here is a 460-byte model of 88 MB of output tensor (about 177 MiB
/// measured), against a limit of 64 MiB; the real models take 10-48 MiB.
@Suite("Models bounded by the memory they take", .serialized)
struct ModelMemoryLimitTests {
    static let huge = Fixtures.path("Tests/Fixtures/Hostile/tile_88mb.tflite")

    @Test("import refuses a tiny model with a huge tensor, naming what it takes and the limit; nothing is installed")
    func importRefuses() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let models = folder.path("models")
        // A cache of its own: a verdict remembered from the import under 1024 below would
        // refuse by the memory measured then, not by the tensors declared.
        let cache = ["NETRUNNER_CACHE_DIR": folder.path("cache")]
        let refused = try ProcessResult.run(
            Fixtures.netrunner, ["import", Self.huge, "--models", models, "--max-model-memory", "64"],
            environment: cache)
        #expect(refused.status != 0)
        #expect(
            refused.stderr.contains(
                "declares 85 MiB of tensors; the check allows 64 MiB, this process's limit (--max-model-memory)"),
            "\(refused.stderr)")
        #expect(refused.stderr.contains("Nothing was installed"), "\(refused.stderr)")
        let installed = (try? FileManager.default.contentsOfDirectory(atPath: models)) ?? []
        #expect(!installed.contains { $0.hasSuffix(".tflite") }, "\(installed)")
        // Under a limit it fits, it is installed as any model.
        let accepted = try ProcessResult.run(
            Fixtures.netrunner, ["import", Self.huge, "--models", models, "--max-model-memory", "1024"],
            environment: cache)
        #expect(accepted.status == 0, "\(accepted.stderr)")
    }

    /// Runs `arguments` from a small Python parent and returns the largest resident set of
    /// any process of the tree it started, in kB, with their result: a child's `ru_maxrss`
    /// starts at its parent's at `exec`, so measured from this test process it would be this
    /// process's size.
    static func peakOfTree(_ arguments: [String]) throws -> (kilobytes: Int, result: ProcessResult) {
        let script = """
            import resource, subprocess, sys
            run = subprocess.run(sys.argv[1:], capture_output=True, text=True)
            sys.stderr.write(run.stderr)
            print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
            sys.exit(run.returncode)
            """
        let result = try ProcessResult.run("/usr/bin/env", ["python3", "-c", script] + arguments)
        return (Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1, result)
    }

    @Test("import refuses the 460-byte model of a 1.4 GB tensor from its file: the tree stays under 300 MB")
    func refusedBeforeAllocation() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let models = folder.path("models")
        let model = Fixtures.path("Tests/Fixtures/Hostile/tile_1400mb.tflite")
        // Before issue 54 the check process allocated it: 2.7 GB of the tree before the refusal.
        let (peak, refused) = try Self.peakOfTree(
            [Fixtures.netrunner, "import", model, "--models", models, "--max-model-memory", "512"])
        #expect(refused.status != 0)
        #expect(
            refused.stderr.contains(
                "declares 1.3 GiB of tensors; the check allows 512 MiB, this process's limit (--max-model-memory)"),
            "\(refused.stderr)")
        #expect(peak > 0 && peak < 300_000, "peak \(peak) kB")
        // Declared within the limit but past the child's address space: refused in the child.
        let (tilePeak, tile) = try Self.peakOfTree(
            [Fixtures.netrunner, "import", Self.huge, "--models", models, "--max-model-memory", "100"])
        #expect(tile.status != 0 && tile.stderr.contains("(--max-model-memory)"), "\(tile.stderr)")
        #expect(tilePeak > 0 && tilePeak < 300_000, "peak \(tilePeak) kB")
        let installed = (try? FileManager.default.contentsOfDirectory(atPath: models)) ?? []
        #expect(!installed.contains { $0.hasSuffix(".tflite") }, "\(installed)")
    }

    @Test("serve leaves a model over the limit UNAVAILABLE with the reason, and serves the others (the embedded)")
    func serveRefuses() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let models = folder.path("models")
        try FileManager.default.createDirectory(atPath: models, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.huge, toPath: models + "/tile_88mb.tflite")
        // In this process: the limit is the server's own (its engine's configuration), not the
        // process's, which stays none for the other tests.
        try await LiveServer.serve(["--no-import", "--max-model-memory", "64"], models: models) { server in
            let index = try await server.request("/v2/repository/index", method: "POST")
            let entries = (try JSONSerialization.jsonObject(with: index.body) as? [[String: String]]) ?? []
            let tile = entries.first { $0["name"] == "tile_88mb" }
            #expect(
                tile?["state"] == "UNAVAILABLE" && tile?["reason"]?.contains("--max-model-memory") == true,
                "\(entries)")
            #expect(entries.first { $0["name"] == "mobilenet-v2-1.0-224-uint8" }?["state"] == "READY", "\(entries)")
            let coffee = try Data(
                contentsOf: URL(fileURLWithPath: Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")))
            #expect(
                try await server.request("/v1/models/mobilenet-v2-1.0-224-uint8/classify", method: "POST", body: coffee)
                    .status == 200)
        }
        #expect(ModelGate.memoryLimit == nil)
    }
}
