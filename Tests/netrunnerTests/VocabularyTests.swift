import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

/// One vocabulary: the flags are the library's (and MediaPipe's) names, every command writes
/// one image's answer in one JSON shape (docs/results-line.schema.json), and the messages a
/// newcomer meets say what to do.
@Suite("One vocabulary")
struct VocabularyTests {
    /// A decoder for the tool's JSON, whose keys are snake_case.
    static var snakeCase: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }

    static let photos = Fixtures.path("Tests/Fixtures/Photos/test")
    static let chelsea = Fixtures.path("Tests/Fixtures/Photos/test/chelsea.png")
    static let portraits = Fixtures.path("Tests/Fixtures/Photos/faces/two_portraits.jpg")

    func netrunner(_ arguments: [String]) throws -> ProcessResult {
        try ProcessResult.run(Fixtures.netrunner, arguments)
    }

    @Test("classify, detect, pose, segment and embed --json, bulk and evaluate lines all match the one schema")
    func oneShape() throws {
        let schema = try JSONSchemaCheck("docs/results-line.schema.json")
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var lines: [(String, Substring)] = []
        let classify = try netrunner(["classify", "--json", Self.photos, folder.path("missing.jpg")])
        #expect(classify.status == 1, "the missing file fails: \(classify.stderr)")
        lines += classify.stdout.split(separator: "\n").map { ("classify", $0) }
        let detect = try netrunner(["detect", "--json", Self.portraits, Fixtures.path("Tests/Fixtures/Photos/faces")])
        #expect(detect.status == 0, "\(detect.stderr)")
        lines += detect.stdout.split(separator: "\n").map { ("detect", $0) }
        // Keypoints and a mask with its areas: a bare MoveNet and DeepLab (classes by index).
        let squat = Fixtures.path("Tests/Fixtures/Pose/squat.png")
        let pose = try netrunner([
            "pose", "--json", "--model", Fixtures.path("Models/movenet_single_pose_lightning_ptq.tflite"), squat,
        ])
        #expect(pose.status == 0, "\(pose.stderr)")
        lines += pose.stdout.split(separator: "\n").map { ("pose", $0) }
        for model in [
            "Models/deeplabv3_mnv2_dm05_pascal_quant.tflite",
            "Models/bundles/deeplabv3_mnv2_dm05_pascal_quant.tiobundle",
        ] {
            let segment = try netrunner(["segment", "--json", "--model", Fixtures.path(model), squat])
            #expect(segment.status == 0, "\(segment.stderr)")
            lines += segment.stdout.split(separator: "\n").map { ("segment", $0) }
        }
        // An embedding, as floats and as bytes.
        let embed = try netrunner([
            "embed", "--json", "--l2-normalize", "--quantize", "--model",
            Fixtures.path("Models/mobilenet_v1_1.0_224_quant_embedding_extractor.tflite"), squat,
        ])
        #expect(embed.status == 0, "\(embed.stderr)")
        lines += embed.stdout.split(separator: "\n").map { ("embed", $0) }
        let output = folder.path("bulk.jsonl")
        let bulk = try netrunner(["bulk", Self.photos, "--output", output, "--no-progress"])
        #expect(bulk.status == 0, "\(bulk.stderr)")
        lines += try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").map { ("bulk", $0) }
        let evaluation = folder.path("evaluation")
        let evaluate = try netrunner([
            "evaluate", Fixtures.path("TestBundles/faces.testbundle"), "--models", Fixtures.path("Models/bundles"),
            "--output", evaluation,
        ])
        #expect(evaluate.status == 0, "\(evaluate.stderr)")
        let results = try FileManager.default.subpathsOfDirectory(atPath: evaluation).filter {
            $0.hasSuffix("results.jsonl")
        }
        #expect(!results.isEmpty)
        for file in results {
            let text = try String(contentsOfFile: evaluation + "/" + file, encoding: .utf8)
            lines += text.split(separator: "\n").map { ("evaluate", $0) }
        }
        #expect(lines.count > 20)
        for command in ["classify", "detect", "pose", "segment", "bulk", "evaluate"] {
            #expect(lines.contains { $0.0 == command }, "\(command) wrote lines")
        }
        for (command, line) in lines {
            let problems = schema.problems(ofLine: line)
            #expect(problems.isEmpty, "\(command): \(problems) in \(line)")
        }
        // classify's line for an image is bulk's line for it, latencies aside.
        func withoutLatencies(_ line: Substring) throws -> NSDictionary {
            var object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            for key in object.keys where key.hasSuffix("_latency") { object[key] = nil }
            object["image"] = (object["image"] as? String).map { URL(fileURLWithPath: $0).lastPathComponent }
            return object as NSDictionary
        }
        let fromClassify = try lines.filter { $0.0 == "classify" && !$0.1.contains("\"error\":true") }.map {
            try withoutLatencies($0.1)
        }
        let fromBulk = try lines.filter { $0.0 == "bulk" }.map { try withoutLatencies($0.1) }
        #expect(fromClassify.count == 4)
        #expect(fromClassify == fromBulk)
    }

    @Test("classify prints the answers worth printing: no 0.0000 padding unless asked for")
    func noPadding() throws {
        // The uint8 MobileNetV2's 5th label for the cat scores exactly 0.
        let plain = try netrunner(["classify", Self.chelsea])
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(!plain.stdout.contains("0.0000"), "\(plain.stdout)")
        #expect(plain.stdout.split(separator: "\n").count == 5, "4 labels under the file's line: \(plain.stdout)")
        let padded = try netrunner(["classify", "--score-threshold", "0", Self.chelsea])
        #expect(padded.stdout.contains("0.0000  tench  [0]"), "\(padded.stdout)")
        // Net Runner's screen, the top 5 over 0.1, is one flag away.
        let screen = try netrunner(["classify", "--score-threshold", "0.1", Self.chelsea])
        #expect(screen.stdout.split(separator: "\n").count == 4, "\(screen.stdout)")
    }

    @Test(
        "The library's names are the flags, the old short forms are aliases",
        arguments: [
            ["--max-results", "2"], ["--top", "2"], ["-k", "2"],
            ["--max-results", "5", "--category-allowlist", "Egyptian cat", "--allow", "tiger cat"],
            ["--max-results", "5", "--category-denylist", "tabby", "--deny", "lynx"],
            ["--max-results", "2", "--score-threshold", "0.2"], ["--max-results", "2", "--threshold", "0.2"],
        ])
    func aliases(arguments: [String]) throws {
        let result = try netrunner(["classify", Self.chelsea] + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        let labels = result.stdout.split(separator: "\n").dropFirst().map {
            $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().dropLast().joined(separator: " ")
        }
        #expect(labels == ["Egyptian cat", "tiger cat"], "\(arguments): \(result.stdout)")
    }

    @Test(
        "Messages a newcomer met say what to do",
        arguments: [
            (
                ["classify", "--allow", "tabby kat", chelsea],
                "--category-allowlist: \"tabby kat\" is not one of the model's 1000 labels (closest: \"tabby\")."
            ),
            (
                ["classify", "--category-allowlist", "cat", chelsea],
                "--category-allowlist: \"cat\" is not one of the model's 1000 labels (closest: \"tabby\", "
                    + "\"tiger cat\", \"Persian cat\", \"Siamese cat\", \"Egyptian cat\")."
            ),
            (
                ["classify", "--category-denylist", "not a label", chelsea],
                "--category-denylist: \"not a label\" is not one of the model's 1000 labels."
            ),
            (
                ["classify", "--model", Fixtures.path("Models/bundles/face_detection_short_range.tiobundle"), chelsea],
                "is an object detector, not a classifier: use `netrunner detect`"
            ),
            (
                [
                    "classify", "--model",
                    Fixtures.path("Models/mobilenet_v1_1.0_224_quant_embedding_extractor.tflite"), chelsea,
                ],
                "is an image embedder, not a classifier: use `netrunner embed`"
            ),
            (
                ["detect", "--model", Fixtures.path("Models/mobilenet_v2_1.0_224_uint8.tflite"), chelsea],
                "it looks like a classifier: use `netrunner classify`"
            ),
            (["classify", "--threads", "-1", chelsea], "--threads must be between 1 and"),
            (["detect", "--annotate", "out.gif", chelsea], "--annotate"),
        ] as [([String], String)])
    func messages(arguments: [String], message: String) throws {
        let result = try netrunner(arguments)
        #expect(result.status != 0)
        #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        #expect(!result.stderr.contains("Missing value"))
    }

    @Test("A video named like an image is called a video, and no byte of it is printed")
    func videoNamedLikeAnImage() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let mp4 = try folder.write(Data([0, 0, 0, 0x18]) + Data("ftypmp42".utf8) + Data(count: 64), named: "clip.jpg")
        let result = try netrunner(["classify", mp4])
        #expect(result.status == 1)
        #expect(
            result.stderr.contains(
                "clip.jpg is not an image NetRunner decodes (JPEG, PNG, BMP, PNM, WebP, GIF, TIFF, HEIC, AVIF): it looks like an MP4 video"
            ))
        #expect(!result.stderr.contains("HEIF") && !result.stderr.contains("66 74 79 70"), "\(result.stderr)")
    }

    @Test("bench takes benchmark_model's flag names, and says why op profiling is not there")
    func benchmarkModelFlags() throws {
        let result = try netrunner([
            "bench", "--graph=" + Fixtures.path(Fixtures.MobileNet.int8), "--num_threads=2", "--num_runs=3",
            "--warmup_runs=1", "--min_secs=0.3", "--max_secs=20", "--json",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        struct Report: Decodable {
            struct Timings: Decodable { var count: Int }
            var threads: Int
            var inferenceMicroseconds: Timings
        }
        let report = try Self.snakeCase.decode(Report.self, from: Data(result.stdout.utf8))
        #expect(report.threads == 2)
        #expect(report.inferenceMicroseconds.count > 3, "--min_secs keeps running past --num_runs")
        let profiling = try netrunner([
            "bench", "--graph=" + Fixtures.path(Fixtures.MobileNet.int8), "--enable_op_profiling",
        ])
        #expect(profiling.status == 64)
        #expect(profiling.stderr.contains("--enable_op_profiling is not available: the runtime's TFLite C API"))
    }

    @Test("bundle create onto an existing folder says it exists, not that it is no bundle")
    func bundleCreateExisting() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let result = try netrunner(["bundle", "create", Fixtures.path(Fixtures.MobileNet.uint8), "-o", folder.url.path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(folder.url.path) already exists; nothing was written."), "\(result.stderr)")
        #expect(!result.stderr.contains("is not a model bundle"))
    }

    @Test("--save-input writes what the model saw: the centre crop for classify, the letterbox for detect")
    func saveInput() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let classify = try netrunner(["classify", "--save-input", folder.path("seen"), Self.photos])
        #expect(classify.status == 0, "\(classify.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path("seen")).sorted()
        #expect(names == ["chelsea.input.png", "coffee.input.png", "eagle.input.png", "grace_hopper.input.png"])
        let eagle = try PixelBuffer(contentsOf: folder.path("seen/eagle.input.png"))
        #expect(eagle.size == PixelSize(width: 224, height: 224))
        let detect = try netrunner(["detect", "--save-input", folder.path("faces"), Self.portraits])
        #expect(detect.status == 0, "\(detect.stderr)")
        let faces = try PixelBuffer(contentsOf: folder.path("faces/two_portraits.input.png"))
        #expect(faces.size == PixelSize(width: 128, height: 128))
        // 640x400 letterboxed into 128x128: 80 rows of picture, 24 black rows above and below.
        #expect(faces.pixel(x: 64, y: 5) == [0, 0, 0] && faces.pixel(x: 64, y: 122) == [0, 0, 0])
        #expect(faces.pixel(x: 64, y: 64) != [0, 0, 0])
        let file = try folder.write(Data("x".utf8), named: "taken")
        let refused = try netrunner(["classify", "--save-input", file, Self.chelsea])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("--save-input \(file) is a file; name a folder"))
    }
}

/// Answers equal the reference by default: `classify` with no decoding flag gives, on every
/// committed photo and for each MobileNetV2 variant, the top 5 Python's `ai_edge_litert` with
/// Pillow gives (recorded in Tests/Fixtures/Evaluation/sample_bundles_reference.json).
@Suite("classify equals Python by default")
struct DefaultDecodingTests {
    struct Reference: Decodable {
        struct Bundle: Decodable {
            struct Model: Decodable {
                struct Image: Decodable {
                    struct Entry: Decodable {
                        var index: Int
                        var probability: Double
                    }
                    var path: String
                    var top5: [Entry]?
                }
                var images: [Image]
            }
            var models: [String: Model]
        }
        var bundles: [String: Bundle]
    }

    @Test(
        "classify's top 5 equals Python's on every committed photo, for each variant",
        arguments: ["mobilenet-v2-1.0-224-uint8", "mobilenet-v2-1.0-224-float32", "mobilenet-v2-1.0-224-int8"])
    func equalsPython(model: String) throws {
        let data = try Fixtures.data("Tests/Fixtures/Evaluation/sample_bundles_reference.json")
        let reference = try JSONDecoder().decode(Reference.self, from: data)
        let expected = try #require(reference.bundles["imagenet-sample"]?.models[model])
        let bundle = Fixtures.path(
            "Models/bundles/"
                + model.replacingOccurrences(of: "-1.0-224-", with: "_1.0_224_")
                .replacingOccurrences(of: "mobilenet-v2", with: "mobilenet_v2") + ".tiobundle")
        let folder = Fixtures.path("TestBundles/imagenet-sample.testbundle/images")
        let result = try ProcessResult.run(
            Fixtures.netrunner,
            ["classify", "--json", "--max-results", "5", "--score-threshold", "0", "--model", bundle, folder])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try result.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(lines.count == expected.images.count)
        for image in expected.images {
            let top5 = try #require(image.top5)
            let name = String(image.path.split(separator: "/").last ?? "")
            let line = try #require(lines.first { ($0["image"] as? String)?.hasSuffix("/" + name) == true }, "\(name)")
            let found = (line["inference_results"] as? [String: Any])?["classification"] as? [[String: Any]] ?? []
            #expect(found.map { $0["index"] as? Int } == top5.map(\.index), "\(model) \(name)")
            for (answer, wanted) in zip(found, top5) {
                #expect(abs((answer["score"] as? Double ?? -1) - wanted.probability) < 1e-5, "\(model) \(name)")
            }
        }
    }
}
