import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

@testable import NetRunner
@testable import NetRunnerEvaluation

/// Test bundles, models by id, the runner's checks and the report built from result lines.
@Suite("Headless evaluation")
struct HeadlessEvaluationTests {
    static let imagenet = Fixtures.path("TestBundles/imagenet-sample.testbundle")
    static let faces = Fixtures.path("TestBundles/faces.testbundle")
    static let models = Fixtures.path("Models")

    /// A test bundle in a temporary folder: `test.json` and the named images copied in.
    func bundle(_ json: String, images: [String: String] = [:], in folder: TemporaryFolder) throws -> String {
        let path = folder.path("t.testbundle")
        try FileManager.default.createDirectory(atPath: path + "/images", withIntermediateDirectories: true)
        try Data(json.utf8).write(to: URL(fileURLWithPath: path + "/test.json"))
        for (name, source) in images {
            try FileManager.default.copyItem(atPath: source, toPath: path + "/images/" + name)
        }
        return path
    }

    @Test("The sample test bundles load, and their model ids are found in Models")
    func sampleBundles() throws {
        let directory = try ModelDirectory(path: Self.models)
        for path in [Self.imagenet, Self.faces] {
            let test = try TestBundle(path: path)
            for id in test.description.models {
                let model = try directory.path(forModel: id, in: test.descriptionPath)
                #expect(ModelBundle.isBundle(model), "\(id) -> \(model)")
            }
            _ = try TestBundleRunner(test: test, models: [])
        }
        #expect(directory.models["mobilenet_v2_1.0_224_uint8"]?.hasSuffix(".tflite") == true)
        #expect {
            try directory.path(forModel: "resnet-50", in: "x/test.json")
        } throws: { error in
            let text = "\(error)"
            return text.contains("x/test.json") && text.contains("resnet-50")
                && text.contains("mobilenet-v2-1.0-224-uint8")
        }
    }

    @Test("A test that cannot run is refused before anything runs, naming test.json and the problem")
    func refusedTests() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let photo = Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")
        func refusal(_ json: String, images: [String: String] = ["a.jpg": photo]) throws -> String {
            try? FileManager.default.removeItem(atPath: folder.path("t.testbundle"))
            let path = try bundle(json, images: images, in: folder)
            do {
                let test = try TestBundle(path: path)
                let runner = try TestBundleRunner(
                    test: test,
                    models: [
                        .init(id: "face", path: Fixtures.path("Models/bundles/face_detection_short_range.tiobundle"))
                    ])
                _ = try runner.loadTask(runner.models[0])
                return ""
            } catch {
                #expect("\(error)".contains(path + "/test.json"), "\(error)")
                return "\(error)"
            }
        }
        let header =
            #""name": "t", "id": "t", "version": "1", "models": ["face"], "images": [{"type": "file", "path": "images/a.jpg"}]"#
        let classification =
            #""labels": [{"path": "images/a.jpg", "inference_results": {"classification": {"espresso": ""}}}]"#
        let detection = #""labels": [{"path": "images/a.jpg", "inference_results": {"detection": []}}]"#
        #expect(
            try refusal(#"{\#(header), "options": {"metric": "F1Score"}, \#(classification)}"#).contains(
                "not a metric NetRunner knows"))
        #expect(
            try refusal(#"{\#(header), "options": {"metric": "mAP"}, \#(classification)}"#).contains(
                "are classifications"))
        #expect(
            try refusal(#"{\#(header), "options": {"metric": "EvaluationMetricAccuracyTop5"}, \#(detection)}"#)
                .contains("are detection boxes"))
        #expect(try refusal(#"{\#(header), "options": {"metric": "top1"}}"#).contains("needs labels"))
        #expect(
            try refusal(#"{\#(header), "options": {"metric": "EvaluationMetricAccuracyTop5"}, \#(classification)}"#)
                .contains("does detection, but EvaluationMetricAccuracyTop5 scores classification"))
        #expect(
            try refusal(#"{\#(header), "options": {"metric": "mAP"}, \#(detection)}"#, images: [:]).contains(
                "lists images that do not exist: images/a.jpg ($.images[0])"))
        #expect(
            try refusal(#"{\#(header), "options": {"metric": "mAP"}, \#(detection)}"#) == "",
            "the same test with its image runs")
        #expect(throws: EvaluationError.self) { try TestBundle(path: folder.path("nowhere.testbundle")) }
        #expect(throws: EvaluationError.self) {
            try TestBundle(path: try bundle("{\"name\": ", in: folder))
        }
    }

    @Test("The report of a resumed run equals that of one run; failures are listed, iterations counted")
    func reportFromRecords() throws {
        let test = try TestBundle(path: Self.imagenet)
        let runner = try TestBundleRunner(
            test: test,
            models: [.init(id: "m", path: Fixtures.path("Models/bundles/mobilenet_v2_1.0_224_uint8.tiobundle"))])
        let task = try runner.loadTask(runner.models[0])
        var records: [ResultsLine] = []
        try runner.run(runner.models[0], task: task, skipping: []) { records.append($0) }
        #expect(records.count == 8 * 3)
        // One image fails in every iteration, as a corrupt file would.
        let broken = test.description.images[2].key
        records = records.map {
            $0.image == broken
                ? ResultsLine(
                    image: $0.image, model: $0.model, iteration: $0.iteration, error: "\(broken) is truncated")
                : $0
        }
        let build = { (records: [ResultsLine]) in
            EvaluationReport.build(
                test: test, metric: runner.metric, models: [(id: "m", path: "p", kind: .classification)],
                records: records, latencyNote: "n")
        }
        let whole = build(records)
        let model = try #require(whole.models.first)
        #expect(model.images == 8 && model.evaluated == 7 && model.runs == 21)
        #expect(model.failures == [.init(image: broken, error: "\(broken) is truncated")])
        #expect(model.latency.inference?.count == 21 && model.latency.inference?.warmUpExcluded == 1)
        #expect(model.examples.count == 7)
        #expect(model.classification?.confusion.total == 7)
        // Every figure flat, as a hub's gate reads it: the metric's keys, top-1/5, the inference latency.
        let classification = try #require(model.classification)
        let inference = try #require(model.latency.inference)
        let flat = model.metric.merging(
            [
                "top1": classification.top1, "top5": classification.top5, "latency_p50_ms": inference.median,
                "latency_p90_ms": inference.p90,
            ], uniquingKeysWith: { first, _ in first })
        #expect(model.flatMetrics == flat && model.metric["classification_accuracy"] != nil)
        #expect(model.flatMetrics["agreement"] == nil)
        // Resumed: the same lines, split and reordered by the interruption, plus lines of another test.
        let resumed =
            Array(records[10...]) + Array(records[..<10]) + [
                ResultsLine(image: "other.jpg", model: "m", iteration: 1, error: "x")
            ]
        #expect(build(resumed).models.first?.metric == model.metric)
        #expect(build(resumed).models.first?.examples == model.examples)
        #expect(build(resumed).models.first?.runs == model.runs)
    }

    @Test("The HTML report is self-contained, escapes what it shows, and draws its charts inline")
    func html() throws {
        let test = try TestBundle(path: Self.faces)
        let runner = try TestBundleRunner(
            test: test,
            models: [
                .init(id: "<b>face</b>", path: Fixtures.path("Models/bundles/face_detection_short_range.tiobundle"))
            ])
        let task = try runner.loadTask(runner.models[0])
        var records: [ResultsLine] = []
        try runner.run(runner.models[0], task: task, skipping: []) { records.append($0) }
        let report = EvaluationReport.build(
            test: test, metric: runner.metric, models: [(id: "<b>face</b>", path: "p", kind: .detection)],
            records: records, latencyNote: "n")
        let thumbnail = try #require(Thumbnail.make(path: Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")))
        #expect(max(thumbnail.size.width, thumbnail.size.height) == 240 && thumbnail.originalSize.width == 600)
        let html = HTMLReport.render([report, report], thumbnails: ["images/two_portraits.jpg": thumbnail])
        #expect(html.hasPrefix("<!DOCTYPE html>") && html.hasSuffix("</html>\n"))
        #expect(!html.contains("<script") && !html.contains("src=\"http") && !html.contains("href=\"http"))
        #expect(html.contains("&lt;b&gt;face&lt;/b&gt;") && !html.contains("<b>face</b>"))
        #expect(html.contains("<svg class=\"chart\""))
        #expect(html.contains("mAP@0.5"))
    }

    /// A sample bundle's report, from one model run as `netrunner evaluate` runs it.
    func sampleReport(_ path: String, model: String, kind: ImageTask.Kind) throws -> EvaluationReport {
        let test = try TestBundle(path: path)
        let runner = try TestBundleRunner(test: test, models: [.init(id: "m", path: Fixtures.path(model))])
        let task = try runner.loadTask(runner.models[0])
        var records: [ResultsLine] = []
        try runner.run(runner.models[0], task: task, skipping: []) { records.append($0) }
        return EvaluationReport.build(
            test: test, metric: runner.metric, models: [(id: "m", path: "p", kind: kind)], records: records,
            latencyNote: "n")
    }

    @Test("The HTML report names its metrics for people, colours a right count as right, and keeps chart titles clear")
    func htmlReadable() throws {
        let faces = HTMLReport.render(
            [
                try sampleReport(
                    Self.faces, model: "Models/bundles/face_detection_short_range.tiobundle", kind: .detection)
            ])
        let imagenet = HTMLReport.render(
            [
                try sampleReport(
                    Self.imagenet, model: "Models/bundles/mobilenet_v2_1.0_224_uint8.tiobundle", kind: .classification)
            ])
        // The summary's headings: the metric's name, not its key.
        #expect(imagenet.contains(">Accuracy (top-5)</th>") && !imagenet.contains(">classification_accuracy<"))
        #expect(imagenet.contains("by the test&#39;s metric, Accuracy (top-5)"))
        #expect(faces.contains(">mAP@0.5</th>") && faces.contains(">mAP@0.5:0.95</th>") && !faces.contains(">mAP50<"))
        // A right answer's count is shown as right (green), a wrong one's as wrong (red).
        let cards = faces.components(separatedBy: "<figure class=\"card").dropFirst()
        #expect(!cards.isEmpty)
        for card in cards {
            let right = !card.hasPrefix(" wrong")
            #expect(card.contains("<span class=\"count \(right ? "right" : "wrong")\">found "), "\(card.prefix(300))")
        }
        #expect(cards.contains { !$0.hasPrefix(" wrong") && $0.contains(">found 2</span>") })
        #expect(faces.contains("span.count.right{color:#1f9d3a}"))
        // A histogram's title has its line to itself: the count axis's label is a line lower.
        for html in [faces, imagenet] {
            let charts = html.components(separatedBy: "<svg class=\"chart\"").dropFirst().filter {
                $0.contains(">runs</text>")
            }
            #expect(charts.count == 2)
            for chart in charts {
                let title = try #require(chart.firstMatch(of: /<text x="[0-9.]+" y="([0-9.]+)" class="title">/))
                let runs = try #require(chart.firstMatch(of: /<text x="[0-9.]+" y="([0-9.]+)"[^>]*>runs<\/text>/))
                let titleY = try #require(Double(title.1))
                let runsY = try #require(Double(runs.1))
                // 12 px titles: the next line starts at least 12 px lower.
                #expect(runsY - titleY >= 12, "\(chart.prefix(200))")
            }
        }
    }

    struct SampleReference: Decodable {
        struct Category: Decodable {
            var index: Int
            var label: String
            var probability: Double
        }
        struct Detection: Decodable {
            var label: String
            var score: Double
            var box: [Double]
        }
        struct Image: Decodable {
            var path: String
            var top5: [Category]?
            var detections: [Detection]?
        }
        struct Model: Decodable {
            var top1Accuracy: Double?
            var top5Accuracy: Double?
            var map50: Double?
            var map50to95: Double?
            var images: [Image]

            enum CodingKeys: String, CodingKey {
                case images, map50
                case top1Accuracy = "top1_accuracy"
                case top5Accuracy = "top5_accuracy"
                case map50to95 = "map50_95"
            }
        }
        struct Bundle: Decodable {
            var bundle: String
            var models: [String: Model]
        }
        var bundles: [String: Bundle]
    }

    /// Runs a sample bundle's models with the library, as `netrunner evaluate` does.
    func evaluate(_ bundle: SampleReference.Bundle) throws -> (EvaluationReport, [ResultsLine]) {
        let test = try TestBundle(path: Fixtures.path(bundle.bundle))
        let directory = try ModelDirectory(path: Self.models)
        let models = try test.description.models.map {
            TestBundleRunner.Model(id: $0, path: try directory.path(forModel: $0, in: test.descriptionPath))
        }
        let runner = try TestBundleRunner(test: test, models: models)
        var records: [ResultsLine] = []
        var kinds: [(id: String, path: String, kind: ImageTask.Kind)] = []
        for model in models {
            let task = try runner.loadTask(model)
            kinds.append((model.id, model.path, task.kind))
            try runner.run(model, task: task, skipping: []) { records.append($0) }
        }
        let report = EvaluationReport.build(
            test: test, metric: runner.metric, models: kinds, records: records, latencyNote: "")
        return (report, records)
    }

    func test(_ bundle: SampleReference.Bundle) throws -> TestBundle {
        try TestBundle(path: Fixtures.path(bundle.bundle))
    }

    @Test("The sample bundles score what the Python reference (ai_edge_litert, Pillow, pycocotools) scores")
    func sampleBundlesMatchReference() throws {
        let reference = try JSONDecoder().decode(
            SampleReference.self, from: Fixtures.data("Tests/Fixtures/Evaluation/sample_bundles_reference.json"))
        let imagenet = try #require(reference.bundles["imagenet-sample"])
        let (classifiers, records) = try evaluate(imagenet)
        for model in classifiers.models {
            let expected = try #require(imagenet.models[model.id])
            #expect(model.classification?.top1 == expected.top1Accuracy, "\(model.id)")
            #expect(model.classification?.top5 == expected.top5Accuracy, "\(model.id)")
            #expect(model.metric["classification_accuracy"] == expected.top5Accuracy)
            for image in expected.images {
                let record = try #require(
                    records.first { $0.model == model.id && $0.image == image.path && $0.iteration == 1 })
                guard case .classification(let result)? = record.answer else {
                    Issue.record("\(image.path): \(record.error ?? "no classification")")
                    continue
                }
                let top5 = try #require(image.top5)
                #expect(result.categories.map(\.index) == top5.map(\.index), "\(model.id) \(image.path)")
                for (ours, theirs) in zip(result.categories, top5) {
                    #expect(abs(Double(ours.score) - theirs.probability) < 1e-5, "\(model.id) \(image.path)")
                }
            }
        }
        let faces = try #require(reference.bundles["faces"])
        let (detectors, faceRecords) = try evaluate(faces)
        let detector = try #require(detectors.models.first)
        let expected = try #require(faces.models[detector.id])
        #expect(abs((detector.detection?.mAP50 ?? 0) - (expected.map50 ?? -1)) < 1e-6)
        #expect(abs((detector.detection?.mAP50to95 ?? 0) - (expected.map50to95 ?? -1)) < 1e-6)
        for image in expected.images {
            let record = try #require(faceRecords.first { $0.image == image.path && $0.iteration == 1 })
            guard case .detection(let result)? = record.answer else {
                Issue.record("\(image.path): no detections")
                continue
            }
            // Every real face the reference finds, in the same place to within a pixel. (Weak
            // false alarms differ more: on the cat in chelsea.png the reference's best scores
            // 0.578 and ours 0.491.)
            let truth = try test(faces).description.expectedDetections[image.path] ?? []
            for face in (image.detections ?? []) where face.score >= 0.5 && !truth.isEmpty {
                let match = result.detections.first { detection in
                    let box = detection.boundingBox
                    return abs(Double(box.minX) - face.box[0]) < 1 && abs(Double(box.minY) - face.box[1]) < 1
                        && abs(Double(box.width) - face.box[2]) < 1 && abs(Double(box.height) - face.box[3]) < 1
                }
                #expect(match != nil, "\(image.path): \(face.box) not among \(result.detections.map(\.boundingBox))")
            }
        }
    }
}
