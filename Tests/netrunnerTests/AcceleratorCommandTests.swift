import Foundation
import NetRunnerTestSupport
import Testing

/// Whether the tool finds a usable GPU here (tried once per test process), and whether the GPU
/// tests must run anyway (`make test` sets NETRUNNER_TEST_REQUIRE_GPU=1 after installing lavapipe).
enum ToolGPU {
    static let verdict: (usable: Bool, reason: String) = {
        guard
            let result = try? ProcessResult.run(
                Fixtures.netrunner,
                ["classify", "--accelerator", "gpu", "--json", Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")])
        else { return (false, "the tool did not start") }
        return (result.status == 0, result.stderr.trimmingCharacters(in: .whitespacesAndNewlines))
    }()

    static var shouldRun: Bool {
        verdict.usable || ProcessInfo.processInfo.environment["NETRUNNER_TEST_REQUIRE_GPU"] == "1"
    }

    static var skipReason: Comment {
        "no Vulkan device LiteRT's GPU accelerator can use here (\(verdict.reason)); scripts/install-gpu-packages.sh installs lavapipe"
    }

    /// An environment where the Vulkan loader finds no driver at all.
    static let noDriver: [String: String?] = [
        "VK_ICD_FILENAMES": "/nonexistent/icd.json", "VK_DRIVER_FILES": "/nonexistent/icd.json",
    ]
}

/// One classification line of `--json` output.
private struct ClassificationLine: Decodable {
    struct Category: Decodable {
        var index: Int
        var score: Float
    }
    struct Results: Decodable {
        var classification: [Category]?
    }
    var image: String
    var results: Results?

    enum CodingKeys: String, CodingKey {
        case image
        case results = "inference_results"
    }
}

private func classificationLines(_ text: String) throws -> [String: [ClassificationLine.Category]] {
    var lines: [String: [ClassificationLine.Category]] = [:]
    for line in text.split(separator: "\n") {
        let decoded = try JSONDecoder().decode(ClassificationLine.self, from: Data(line.utf8))
        lines[URL(fileURLWithPath: decoded.image).lastPathComponent] = decoded.results?.classification ?? []
    }
    return lines
}

@Suite("--accelerator without a GPU")
struct AcceleratorChoiceCommandTests {
    static let photos = Fixtures.path("Tests/Fixtures/Photos/test")

    @Test("gpu without a Vulkan driver: exit 1, one message naming what is missing; nothing on stdout")
    func gpuRefused() throws {
        let result = try ProcessResult.run(
            Fixtures.netrunner, ["classify", "--accelerator", "gpu", Self.photos], environment: ToolGPU.noDriver)
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("the GPU is not usable"))
        #expect(result.stderr.contains("Vulkan") || result.stderr.contains("libLiteRtWebGpuAccelerator"))
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    }

    @Test("auto without a Vulkan driver: the CPU's answers, one notice for every interpreter that fell back")
    func autoFallsBack() throws {
        let cpu = try ProcessResult.run(Fixtures.netrunner, ["classify", "--json", "--threads", "2", Self.photos])
        let auto = try ProcessResult.run(
            Fixtures.netrunner, ["classify", "--json", "--threads", "2", "--accelerator", "auto", Self.photos],
            environment: ToolGPU.noDriver)
        #expect(cpu.status == 0)
        #expect(auto.status == 0, "\(auto.stderr)")
        #expect(try classificationLines(auto.stdout).count == 4)
        #expect(
            try classificationLines(auto.stdout).mapValues { $0.map(\.index) }
                == classificationLines(cpu.stdout).mapValues { $0.map(\.index) })
        let notices = auto.stderr.split(separator: "\n").filter { $0.contains("--accelerator auto runs on the CPU") }
        #expect(notices.count == 1, "\(auto.stderr)")
    }

    @Test("A value that is not an accelerator is refused with the choices")
    func badValue() throws {
        let result = try ProcessResult.run(Fixtures.netrunner, ["classify", "--accelerator", "tpu", Self.photos])
        #expect(result.status == 64)
        #expect(result.stderr.contains("cpu"))
        #expect(result.stderr.contains("gpu"))
        #expect(result.stderr.contains("auto"))
    }
}

@Suite("--accelerator gpu", .serialized, .enabled(if: ToolGPU.shouldRun, ToolGPU.skipReason))
struct GPUCommandTests {
    static let photos = Fixtures.path("Tests/Fixtures/Photos/test")
    static let floatModel = Fixtures.path(Fixtures.MobileNet.float32)

    @Test("classify and bulk on the GPU answer as the CPU: same top-5, scores within 0.0001 (float model)")
    func classifyAndBulk() throws {
        let cpu = try ProcessResult.run(Fixtures.netrunner, ["classify", "--json", "-m", Self.floatModel, Self.photos])
        let gpu = try ProcessResult.run(
            Fixtures.netrunner, ["classify", "--json", "-m", Self.floatModel, "--accelerator", "gpu", Self.photos])
        #expect(gpu.status == 0, "\(gpu.stderr)")
        let cpuLines = try classificationLines(cpu.stdout)
        let gpuLines = try classificationLines(gpu.stdout)
        #expect(cpuLines.count == 4)
        #expect(gpuLines.mapValues { $0.map(\.index) } == cpuLines.mapValues { $0.map(\.index) })
        for (photo, categories) in gpuLines {
            for (a, b) in zip(categories, cpuLines[photo] ?? []) {
                #expect(abs(a.score - b.score) <= 0.0001, "\(photo): \(a.score) vs \(b.score)")
            }
        }
        let bulk = try ProcessResult.run(
            Fixtures.netrunner,
            ["bulk", "-m", Self.floatModel, "--accelerator", "gpu", "--threads", "2", "--no-progress", Self.photos])
        #expect(bulk.status == 0, "\(bulk.stderr)")
        #expect(bulk.stdout.split(separator: "\n").count == 4)
        #expect(bulk.stdout.contains("\"error\":false"))
    }

    @Test("detect runs BlazeFace on the GPU and finds Grace Hopper's face")
    func detect() throws {
        let result = try ProcessResult.run(
            Fixtures.netrunner,
            ["detect", "--accelerator", "gpu", "--json", Fixtures.path("Tests/Fixtures/Photos/test/grace_hopper.jpg")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("\"face\""), "\(result.stdout)")
    }

    @Test("bench reports the GPU and whether every operator ran there")
    func bench() throws {
        let result = try ProcessResult.run(
            Fixtures.netrunner,
            ["bench", Self.floatModel, "--accelerator", "gpu", "--runs", "3", "--warmup", "1", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        struct Report: Decodable {
            var accelerator: String
            var fullyAccelerated: Bool
            enum CodingKeys: String, CodingKey {
                case accelerator
                case fullyAccelerated = "fully_accelerated"
            }
        }
        let report = try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8))
        #expect(report.accelerator == "gpu")
        #expect(report.fullyAccelerated)
    }

    @Test("evaluate --accelerator cpu --accelerator gpu: both in one report, the same accuracy, 100% agreement")
    func evaluateSideBySide() throws {
        let folder = try TemporaryFolder()
        let result = try ProcessResult.run(
            Fixtures.netrunner,
            [
                "evaluate", Fixtures.path("TestBundles/imagenet-sample.testbundle"), "--compare",
                Fixtures.path("Models/bundles/mobilenet_v2_1.0_224_float32.tiobundle"), "--accelerator", "cpu",
                "--accelerator", "gpu", "--output", folder.path("out"), "--no-progress",
            ])
        #expect(result.status == 0, "\(result.stderr)")
        struct Report: Decodable {
            struct Model: Decodable {
                struct Scores: Decodable { var top1: Double }
                struct Agreement: Decodable {
                    var baseline: String
                    var images: Int
                    var top1: Double
                    var maxTop1ScoreDifference: Double?
                }
                var id: String
                var classification: Scores?
                var agreement: Agreement?
            }
            var models: [Model]
        }
        let data = try Data(
            contentsOf: URL(fileURLWithPath: folder.path("out/imagenet-sample-photos/report.json")))
        let report = try JSONDecoder().decode(Report.self, from: data)
        #expect(report.models.map(\.id) == ["mobilenet-v2-1.0-224-float32@cpu", "mobilenet-v2-1.0-224-float32@gpu"])
        #expect(report.models.first?.agreement == nil)
        let agreement = try #require(report.models.last?.agreement)
        #expect(agreement.baseline == "mobilenet-v2-1.0-224-float32@cpu")
        #expect(agreement.images == 8)
        #expect(agreement.top1 == 1)
        #expect((agreement.maxTop1ScoreDifference ?? 1) <= 0.0001)
        #expect(report.models[0].classification?.top1 == report.models[1].classification?.top1)
        #expect((report.models[0].classification?.top1 ?? 0) > 0.5)
    }

    @Test("stream and run on the GPU: the same faces and classes as on the CPU")
    func streamAndRun() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-gpu-stream")
        defer { folder.remove() }
        let clip = try VideoClips.faces(in: folder.url.path)
        func faces(_ extra: [String]) throws -> [Int] {
            let result = try ProcessResult.run(
                Fixtures.netrunner, ["stream", clip, "--model", "face", "--json", "--every", "5"] + extra)
            #expect(result.status == 0, "\(result.stderr)")
            return try result.stdout.split(separator: "\n").map { line in
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                let detections = (object?["inference_results"] as? [String: Any])?["detection"] as? [Any]
                return detections?.count ?? -1
            }
        }
        let onGPU = try faces(["--accelerator", "gpu"])
        #expect(onGPU == (try faces([])))
        #expect(onGPU.count == 2)
        #expect(onGPU.allSatisfy { $0 == 2 }, "\(onGPU)")

        let bundle = Fixtures.path("Models/bundles/mobilenet_v2_1.0_224_float32.tiobundle")
        let photo = Fixtures.path("Tests/Fixtures/Photos/test/eagle.jpg")
        let cpu = try ProcessResult.run(Fixtures.netrunner, ["run", bundle, photo, "--json"])
        let gpu = try ProcessResult.run(Fixtures.netrunner, ["run", bundle, photo, "--json", "--accelerator", "gpu"])
        #expect(gpu.status == 0, "\(gpu.stderr)")
        #expect(gpu.stdout.contains("bald eagle"), "\(gpu.stdout)")
        #expect(cpu.stdout.contains("bald eagle"))
    }
}
