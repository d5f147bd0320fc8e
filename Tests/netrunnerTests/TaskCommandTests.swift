import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

/// `classify` and `detect`, as a user runs them, on real photos and on bad input.
@Suite("netrunner classify and detect")
struct TaskCommandTests {
    func netrunner(_ arguments: [String]) throws -> ProcessResult {
        try ProcessResult.run(Fixtures.netrunner, arguments)
    }

    @Test("classify with the embedded model prints the expected labels for the committed photos")
    func classifyEmbedded() throws {
        let result = try netrunner(["classify", Fixtures.path("Tests/Fixtures/Photos/test")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        let blocks = result.stdout.components(separatedBy: "\nTests/").count
        #expect(blocks >= 1)
        for (file, label) in [
            ("chelsea.png", "Egyptian cat"), ("coffee.jpg", "espresso"), ("eagle.jpg", "bald eagle"),
            ("grace_hopper.jpg", "military uniform"),
        ] {
            let block = try #require(
                result.stdout.components(separatedBy: "\n").drop { !$0.hasSuffix(file) && !$0.contains(file + "  ") }
                    .dropFirst().first)
            #expect(block.contains(label), "\(file): \(block)")
        }
    }

    @Test("classify --json prints one results line per image, in bulk's shape: label, index and score")
    func classifyJSON() throws {
        let result = try netrunner([
            "classify", "--json", "--top", "3", Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg"),
            "--model", Fixtures.path(Fixtures.MobileNet.float32), "--labels", Fixtures.path(Fixtures.MobileNet.labels),
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 1)
        let first = try #require(lines.first)
        let line = try #require(try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any])
        #expect(line["image"] as? String == Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg"))
        #expect(line["error"] as? Bool == false)
        let results = try #require(line["inference_results"] as? [String: Any])
        let categories = try #require(results["classification"] as? [[String: Any]])
        #expect(categories.count == 3)
        #expect(categories.first?["index"] as? Int == 967)
        #expect(categories.first?["display_name"] as? String == "espresso")
        #expect(categories.first?["label"] as? String == "espresso")
        #expect((line["inference_latency"] as? Double ?? 0) > 0)
    }

    @Test("Bad images are reported per file, the others still run, and the exit status is 1")
    func badImages() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("netrunner-bad-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let jpeg = try Fixtures.data("Tests/Fixtures/Photos/test/coffee.jpg")
        try Data().write(to: folder.appendingPathComponent("empty.jpg"))
        try jpeg.prefix(jpeg.count / 3).write(to: folder.appendingPathComponent("truncated.jpg"))
        try Data("not an image at all".utf8).write(to: folder.appendingPathComponent("text.png"))
        // A PNG header claiming 100000 x 100000 pixels (and nothing else).
        var huge = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])
        huge += Data([0x00, 0x01, 0x86, 0xA0, 0x00, 0x01, 0x86, 0xA0, 8, 2, 0, 0, 0, 0, 0, 0, 0])
        try huge.write(to: folder.appendingPathComponent("huge.png"))
        try jpeg.write(to: folder.appendingPathComponent("good.jpg"))

        let result = try netrunner(["classify", folder.path])
        #expect(result.status == 1)
        #expect(result.stdout.contains("good.jpg"))
        #expect(result.stdout.contains("espresso"))
        let errors = result.stderr.split(separator: "\n")
        #expect(errors.contains { $0.contains("empty.jpg") })
        #expect(errors.contains { $0.contains("truncated.jpg") })
        #expect(errors.contains { $0.contains("text.png") })
        #expect(errors.contains { $0.contains("huge.png") && $0.contains("100000") })
        #expect(errors.last == "4 of 5 images failed.")
    }

    @Test("An error printed while another thread loads its model is never lost to the runtime's log capture")
    func diagnosticsSurviveLogCapture() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let empty = try folder.write(Data(), named: "a-empty.jpg")
        let good = try folder.write(try Fixtures.data("Tests/Fixtures/Photos/test/coffee.jpg"), named: "b-good.jpg")
        // Two workers: the first image fails at once while the second worker is still compiling.
        for _ in 0..<6 {
            let result = try netrunner(["classify", "--threads", "2", empty, good])
            #expect(result.status == 1)
            #expect(result.stderr.contains("a-empty.jpg is empty"), "stderr: \(result.stderr)")
        }
    }

    @Test("Image files of formats not decoded here are counted in a note, not skipped without a word")
    func undecodedFormatsCounted() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        _ = try folder.write(try Fixtures.data("Tests/Fixtures/Photos/test/coffee.jpg"), named: "coffee.jpg")
        for name in ["a.jxl", "b.psd", "c.JXL", "d.jp2", "notes.txt"] { _ = try folder.write(Data(), named: name) }
        let result = try netrunner(["classify", "--top", "1", folder.url.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("skipped 4 image file(s) of formats not decoded here (1 jp2, 2 jxl, 1 psd)"))
    }

    @Test("Grayscale, 16-bit, palette and grey+alpha PNGs are classified like any other image")
    func pngVariants() throws {
        let variants = ["png_gray8.png", "png_gray16.png", "png_rgb16.png", "png_grayalpha8.png", "png_palette4.png"]
        let paths = variants.map { Fixtures.path("Tests/Fixtures/ImageReference/\($0)") }
        let result = try netrunner(["classify", "--json", "--top", "1"] + paths)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").count == variants.count)

        // A real photo turned grayscale is still a cat.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("netrunner-gray-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let gray = try PixelBuffer(contentsOf: Fixtures.path("Tests/Fixtures/Photos/test/chelsea.png")).converted(
            to: .gray8)
        let path = folder.appendingPathComponent("chelsea-gray.png").path
        try gray.write(to: path, format: .png)
        let cat = try netrunner(["classify", "--json", path])
        #expect(cat.status == 0, "\(cat.stderr)")
        struct Line: Decodable {
            struct Results: Decodable {
                struct Category: Decodable { var index: Int }
                var classification: [Category]
            }
            var inferenceResults: Results
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let line = try decoder.decode(Line.self, from: Data(cat.stdout.utf8))
        #expect(line.inferenceResults.classification.contains { (281...287).contains($0.index) }, "\(cat.stdout)")
    }

    @Test("classify --model accepts a TensorIO bundle, and bundle validate checks bundles")
    func bundles() throws {
        let bundle = Fixtures.path("Tests/Fixtures/Bundles/mobilenet_v2_1.0_224_float32.tiobundle")
        let result = try netrunner([
            "classify", "--top", "1", "--model", bundle, Fixtures.path("Tests/Fixtures/Photos/test/eagle.jpg"),
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("bald eagle"))

        let valid = try netrunner(["bundle", "validate", bundle])
        #expect(valid.status == 0)
        #expect(valid.stdout.hasPrefix("valid    \(bundle): \"MobileNet V2 1.0 224\""))

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("netrunner-bad-\(UUID()).tiobundle")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(#"{"name": "x", "inputs": [], "outputs": [], "model": {"file": "m.tflite", "quantized": 1}}"#.utf8)
            .write(to: folder.appendingPathComponent("model.json"))
        let invalid = try netrunner(["bundle", "validate", folder.path])
        #expect(invalid.status == 1)
        #expect(invalid.stdout.contains("model.quantized: expected true or false, found 1"))
        #expect(invalid.stdout.contains("license: expected a string, found missing"))
        let classify = try netrunner([
            "classify", "--model", folder.path, Fixtures.path("Tests/Fixtures/Photos/test/eagle.jpg"),
        ])
        #expect(classify.status == 1)
        #expect(classify.stderr.contains("is not a valid model description"))
    }

    @Test("run prints a described model's answers, formatted by its type, and a metadata model needs no labels")
    func runBundle() throws {
        let bundle = Fixtures.path("Tests/Fixtures/Bundles/mobilenet_v2_1.0_224_float32.tiobundle")
        let result = try netrunner(["run", bundle, Fixtures.path("Tests/Fixtures/Photos/test/chelsea.png")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("  0.7954  Egyptian cat"))
        // Net Runner's classification display: the top 5 above 0.1 (two labels here).
        #expect(result.stdout.split(separator: "\n").count == 3)
        let json = try netrunner(["run", "--json", bundle, Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")])
        struct Line: Decodable { var outputs: [String: [String: Double]] }
        let line = try JSONDecoder().decode(Line.self, from: Data(json.stdout.utf8))
        #expect((line.outputs["classification"]?["espresso"] ?? 0) > 0.9)

        let metadata = try netrunner([
            "classify", "--top", "1", "--model", Fixtures.path("Models/mobilenet_v2_1.0_224_uint8_metadata.tflite"),
            Fixtures.path("Tests/Fixtures/Photos/test/eagle.jpg"),
        ])
        #expect(metadata.status == 0, "\(metadata.stderr)")
        #expect(metadata.stdout.contains("bald eagle"))
    }

    @Test("run takes a detector's bundle as a detector, and bundle validate makes the same checks as run")
    func runDetectorBundle() throws {
        let bundle = Fixtures.path("Models/bundles/face_detection_short_range.tiobundle")
        let result = try netrunner(["run", bundle, Fixtures.path("Tests/Fixtures/Photos/test/grace_hopper.jpg")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("face  box"))
        let validate = try netrunner(["bundle", "validate", bundle])
        #expect(validate.status == 0 && validate.stdout.hasPrefix("valid"))
        // A classifier bundle whose labels do not fit its classes: invalid, as running it fails.
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let copy = folder.path("short-labels.tiobundle")
        try FileManager.default.copyItem(
            atPath: Fixtures.path("Models/bundles/mobilenet_v2_1.0_224_uint8.tiobundle"), toPath: copy)
        try Data("one\ntwo\n".utf8).write(to: URL(fileURLWithPath: copy + "/assets/labels.txt"))
        let invalid = try netrunner(["bundle", "validate", copy])
        #expect(invalid.status == 1)
        #expect(invalid.stdout.contains("2 labels but the model has 1000 classes"))
        let run = try netrunner(["run", copy, Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")])
        #expect(run.status == 1)
    }

    @Test("detect --model takes the face detector's own bundle, folder or zip, as classify does")
    func detectTakesBundles() throws {
        let portrait = Fixtures.path("Tests/Fixtures/Photos/test/grace_hopper.jpg")
        let bundle = Fixtures.path("Models/bundles/face_detection_short_range.tiobundle")
        let result = try netrunner(["detect", "--model", bundle, portrait])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("face  box"))
        let embedded = try netrunner(["detect", portrait])
        let lines = { (text: String) in text.split(separator: "\n").dropFirst().map(String.init) }
        #expect(lines(result.stdout) == lines(embedded.stdout))
        let inspected = try netrunner(["inspect", bundle])
        #expect(inspected.stdout.contains("\"Short Range Face Detection\" id face-detection-short-range"))
    }

    @Test("A bare .tflite runs by its metadata, else by a model.json beside it, else with a notice of what is assumed")
    func modelResolution() throws {
        let photo = Fixtures.path("Tests/Fixtures/Photos/test/chelsea.png")
        let sibling = try netrunner([
            "classify", "--top", "1", "--model",
            Fixtures.path(
                "Tests/Fixtures/Bundles/mobilenet_v2_1.0_224_float32.tiobundle/mobilenet_v2_1.0_224_float32.tflite"),
            photo,
        ])
        #expect(sibling.status == 0, "\(sibling.stderr)")
        #expect(sibling.stdout.contains("Egyptian cat"))
        #expect(sibling.stderr.isEmpty)
        let bare = try netrunner(["classify", "--top", "1", "--model", Fixtures.path(Fixtures.MobileNet.uint8), photo])
        #expect(bare.status == 0)
        #expect(bare.stdout.contains("class 285"))
        #expect(
            bare.stderr.contains("has no metadata and no model.json beside it: assuming RGB"))
        let zipped = try netrunner(["inspect", Fixtures.path("Tests/Fixtures/Bundles/multi_io.tiobundle.zip")])
        #expect(zipped.status == 0, "\(zipped.stderr)")
        #expect(zipped.stdout.contains("\"multi io\" id multi-io, version 1"))
        #expect(zipped.stdout.contains("output \"count\" array [1]"))
        let inspect = try netrunner(["inspect", Fixtures.path("Models/mobilenet_v2_1.0_224_uint8_metadata.tflite")])
        #expect(inspect.stdout.contains("Metadata: \"MobileNetV2 1.0 224 ImageNet (uint8 quantized)\" version 1"))
        #expect(inspect.stdout.contains("files labels.txt (tensorAxisLabels), labels_en.txt (tensorAxisLabels, en)"))
    }

    @Test("A labels file of the wrong length and a model whose input is not an image are clear errors")
    func badModels() throws {
        let photo = Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")
        let labels = try netrunner([
            "classify", "--model", Fixtures.path(Fixtures.MobileNet.uint8), "--labels",
            Fixtures.path("Models/face_labels.txt"),
            photo,
        ])
        #expect(labels.status == 1)
        #expect(labels.stderr.contains("face_labels.txt has 1 labels but the model has 1000 classes"))
        let notImage = try netrunner(["classify", "--model", Fixtures.path(Fixtures.Synthetic.multiIO), photo])
        #expect(notImage.status == 1)
        #expect(notImage.stderr.contains("is not an image model"))
        let notDetector = try netrunner(["detect", "--model", Fixtures.path(Fixtures.MobileNet.uint8), photo])
        #expect(notDetector.status == 1)
        #expect(notDetector.stderr.contains("outputs this task cannot read"))
    }

    @Test("detect finds the two faces and writes the annotated picture")
    func detect() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("netrunner-annotate-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("out.png").path
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let result = try netrunner([
            "detect", "--json", Fixtures.path("Tests/Fixtures/Photos/faces/two_portraits.jpg"), "--annotate", output,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        struct Line: Decodable {
            struct Results: Decodable {
                struct Detection: Decodable { var box: [Float] }
                var detection: [Detection]
            }
            var imageWidth: Int
            var imageHeight: Int
            var inferenceResults: Results
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let line = try decoder.decode(Line.self, from: Data(result.stdout.utf8))
        #expect(line.imageWidth == 640 && line.imageHeight == 400)
        #expect(line.inferenceResults.detection.count == 2)
        #expect(line.inferenceResults.detection.allSatisfy { $0.box.count == 4 })
        let written = try Data(contentsOf: URL(fileURLWithPath: output))
        #expect(written.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        #expect(written.count > 10_000)
    }
}
