import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

@testable import NetRunner
@testable import NetRunnerEvaluation

/// PCK, OKS, mean IoU and pixel accuracy on the sample bundles made from Coral's test data
/// (`tools/pose/make_test_bundles.py`), against `tools/pose/metrics.py`: Python's answers
/// (ai_edge_litert, Pillow, numpy) and its metrics of them, recorded in
/// `Tests/Fixtures/Evaluation/{pose,segmentation}_sample.python.json{,l}`.
@Suite("Pose and segmentation evaluation")
struct PoseAndSegmentationEvaluationTests {
    static let models = Fixtures.path("Models")

    /// What metrics.py printed.
    struct PythonMetrics: Decodable {
        struct Model: Decodable {
            var metric: [String: Double]
            var breakdown: [String: [String: Double]]
            var images: [String: [String: Double]]
        }
        var models: [String: Model]
    }

    static func python(_ name: String) throws -> (PythonMetrics, [ResultsLine]) {
        let metrics = try JSONDecoder().decode(
            PythonMetrics.self, from: Fixtures.data("Tests/Fixtures/Evaluation/\(name).python.json"))
        let text = String(decoding: try Fixtures.data("Tests/Fixtures/Evaluation/\(name).python.jsonl"), as: UTF8.self)
        let lines = try text.split(separator: "\n").map {
            try JSONDecoder().decode(ResultsLine.self, from: Data($0.utf8))
        }
        return (metrics, lines)
    }

    static func bundle(_ name: String) throws -> TestBundle {
        try TestBundle(path: Fixtures.path("TestBundles/\(name).testbundle"))
    }

    /// The report of some results lines, as `evaluate` builds it.
    static func report(_ test: TestBundle, records: [ResultsLine], kind: ImageTask.Kind) throws -> EvaluationReport {
        let metric = try #require(TestMetric.named(test.description.metric))
        #expect(metric.kind == kind)
        let models = test.description.models.map { (id: $0, path: $0, kind: kind) }
        return EvaluationReport.build(test: test, metric: metric, models: models, records: records, latencyNote: "")
    }

    /// Runs the bundle's models with NetRunner, as `evaluate` does.
    static func run(_ test: TestBundle) throws -> [ResultsLine] {
        let directory = try ModelDirectory(path: models)
        let entries = try test.description.models.map {
            TestBundleRunner.Model(id: $0, path: try directory.path(forModel: $0, in: test.descriptionPath))
        }
        let runner = try TestBundleRunner(test: test, models: entries)
        var records: [ResultsLine] = []
        for model in entries {
            try runner.run(model, task: try runner.loadTask(model), skipping: []) { records.append($0) }
        }
        return records
    }

    static func expectSame(_ report: EvaluationReport, _ python: PythonMetrics, valueKey: String) throws {
        for model in report.models {
            let expected = try #require(python.models[model.id], "\(model.id)")
            #expect(Set(model.metric.keys) == Set(expected.metric.keys))
            for (key, value) in expected.metric {
                #expect(
                    abs((model.metric[key] ?? -1) - value) < 1e-12, "\(model.id) \(key): \(model.metric[key] ?? -1)")
            }
            let rows = try #require(model.breakdown?.rows)
            #expect(Set(rows.map(\.label)) == Set(expected.breakdown.keys), "\(model.id)")
            for row in rows {
                #expect(abs(row.values[0] - (expected.breakdown[row.label]?[valueKey] ?? -1)) < 1e-12, "\(row.label)")
            }
            for example in model.examples {
                let image = try #require(expected.images[example.image])
                let value = image["oks"] ?? image["mean_iou"] ?? -1
                #expect(example.correct == (value >= 0.5), "\(model.id) \(example.image)")
            }
        }
    }

    @Test("Python's MoveNet answers score Python's PCK@0.2, OKS and PCK per keypoint")
    func poseMetricsOfPythonsAnswers() throws {
        let (python, lines) = try Self.python("pose_sample")
        let report = try Self.report(try Self.bundle("pose-sample"), records: lines, kind: .pose)
        try Self.expectSame(report, python, valueKey: "pck")
        let model = try #require(report.models.first)
        #expect(model.metric["pck"] ?? 1 < 1 && model.metric["oks"] ?? 1 < 0.95, "the turned photo misses some")
        #expect(model.examples.count == 3 && model.failures.isEmpty)
    }

    @Test("Python's DeepLab masks score Python's mean IoU, pixel accuracy and IoU per class")
    func segmentationMetricsOfPythonsAnswers() throws {
        let (python, lines) = try Self.python("segmentation_sample")
        let report = try Self.report(try Self.bundle("segmentation-sample"), records: lines, kind: .segmentation)
        try Self.expectSame(report, python, valueKey: "iou")
        #expect(report.models.count == 2 && report.models.allSatisfy { $0.examples.count == 2 })
    }

    @Test("NetRunner's own answers score as Python's answers do, within the models' differences")
    func endToEnd() throws {
        for (name, kind, tolerance) in [
            ("pose_sample", ImageTask.Kind.pose, 0.02), ("segmentation_sample", .segmentation, 0.005),
        ] {
            let test = try Self.bundle(name.replacingOccurrences(of: "_", with: "-"))
            let (python, _) = try Self.python(name)
            let report = try Self.report(test, records: try Self.run(test), kind: kind)
            for model in report.models {
                #expect(model.failures.isEmpty && model.evaluated == test.description.images.count)
                let expected = try #require(python.models[model.id])
                for (key, value) in expected.metric.sorted(by: { $0.key < $1.key }) {
                    let ours = model.metric[key] ?? -1
                    print("evaluate \(model.id) \(key): NetRunner \(ours), Python \(value)")
                    #expect(abs(ours - value) <= tolerance, "\(model.id) \(key)")
                }
            }
        }
    }

    @Test("Masks at the model's resolution (serve's default) score as the image-size masks do")
    func modelResolutionMasks() throws {
        let test = try Self.bundle("segmentation-sample")
        let records = try Self.run(test)
        let directory = try ModelDirectory(path: Self.models)
        var options = ImageSegmenter.Options()
        options.maskResolution = .model
        var segmenters: [String: ImageSegmenter] = [:]
        var small: [ResultsLine] = []
        for record in records {
            let model = try #require(record.model)
            let image = try #require(test.description.images.first { $0.key == record.image })
            if segmenters[model] == nil {
                let path = try directory.path(forModel: model, in: test.descriptionPath)
                segmenters[model] = try ImageSegmenter(model: try LoadedModel(.path(path)), options: options)
            }
            let path = try #require(test.localPath(of: image))
            let result = try #require(try segmenters[model]?.run(.file(path)))
            let full = try #require(record.answer?.result as? SegmentationResult)
            #expect(result.categoryMask.width == 513 && result.imageSize == full.imageSize)
            var line = record
            line.answer = result.imageAnswer
            small.append(line)
            let evaluation = SegmentationEvaluation()
            #expect(evaluation.agreement(of: result.imageAnswer, with: try #require(record.answer))?.same == true)
        }
        let report = try Self.report(test, records: records, kind: .segmentation)
        let smallReport = try Self.report(test, records: small, kind: .segmentation)
        #expect(report.models.map(\.metric) == smallReport.models.map(\.metric))
        #expect(
            report.models.map { $0.breakdown?.rows.map(\.values) }
                == smallReport.models.map { $0.breakdown?.rows.map(\.values) })
    }

    @Test("The JSON report keeps the breakdown; the HTML page shows the metrics and the table")
    func reports() throws {
        let (_, lines) = try Self.python("segmentation_sample")
        let report = try Self.report(try Self.bundle("segmentation-sample"), records: lines, kind: .segmentation)
        let data = try JSONEncoder().encode(report)
        #expect(try JSONDecoder().decode(EvaluationReport.self, from: data) == report)
        let html = HTMLReport.render([report], thumbnails: [:])
        #expect(html.contains("IoU per class") && html.contains("mean_iou") && html.contains("pixel_accuracy"))
        #expect(html.contains("<td>bird</td>") && html.contains("a mean IoU of at least 0.5"))
        let (_, poseLines) = try Self.python("pose_sample")
        let pose = try Self.report(try Self.bundle("pose-sample"), records: poseLines, kind: .pose)
        let page = HTMLReport.render([pose], thumbnails: [:])
        #expect(page.contains("PCK@0.2 per keypoint") && page.contains("<td>left_knee</td>"))
    }

    @Test("A label that cannot be scored is a failure naming it; a mask outside the bundle is not read")
    func badLabels() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("t.testbundle")
        try FileManager.default.createDirectory(atPath: path + "/images", withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Fixtures.path("TestBundles/segmentation-sample.testbundle/images/dog.jpg"),
            toPath: path + "/images/a.jpg")
        try FileManager.default.copyItem(atPath: path + "/images/a.jpg", toPath: path + "/images/b.jpg")
        try FileManager.default.copyItem(atPath: path + "/images/a.jpg", toPath: path + "/images/c.jpg")
        let json = """
            {"name": "t", "id": "t", "version": "1", "models": ["m"], "options": {"metric": "mIoU"},
             "images": [{"type": "file", "path": "images/a.jpg"}, {"type": "file", "path": "images/b.jpg"},
                        {"type": "file", "path": "images/c.jpg"}],
             "labels": [{"path": "images/a.jpg", "inference_results": {"segmentation": {"mask": "../outside.png"}}},
                        {"path": "images/b.jpg", "inference_results": {"segmentation": {"mask": "missing.png"}}},
                        {"path": "images/c.jpg", "inference_results": {"segmentation": {"masks": 3}}}]}
            """
        try Data(json.utf8).write(to: URL(fileURLWithPath: path + "/test.json"))
        try CategoryMask(width: 2, height: 2, classIndices: [0, 0, 0, 0]).pngData()
            .write(to: URL(fileURLWithPath: folder.path("outside.png")))
        let test = try TestBundle(path: path)
        #expect(SegmentationEvaluation().labelledImages(in: test.description) == 3)
        let answer = SegmentationResult(
            categoryMask: CategoryMask(width: 2, height: 2, classIndices: [0, 0, 0, 0]), labels: nil)
        let records = ["images/a.jpg", "images/b.jpg", "images/c.jpg"].map {
            ResultsLine(image: $0, model: "m", answer: answer.imageAnswer)
        }
        let report = try Self.report(test, records: records, kind: .segmentation)
        let failures = try #require(report.models.first?.failures)
        #expect(failures.map(\.image) == ["images/a.jpg", "images/b.jpg", "images/c.jpg"])
        #expect(failures[0].error.contains("../outside.png") && failures[2].error.contains("{\"mask\""))
        #expect(report.models.first?.examples.isEmpty == true)

        // Pose labels: numbers out of range and a keypoint twice are refused.
        for bad in [
            #"{"keypoints": [{"name": "nose", "x": 1e12, "y": 3}]}"#,
            #"{"keypoints": [{"name": "nose", "x": 1, "y": 3}, {"name": "nose", "x": 2, "y": 3}]}"#,
            #"{"keypoints": [{"name": "nose", "x": 1, "y": 3}], "box": [0, 0, -1, 4]}"#, #"{"keypoints": []}"#,
        ] {
            guard case .failure = PoseLabel.parse(Data(bad.utf8)) else {
                Issue.record("accepted \(bad)")
                continue
            }
        }
    }

    @Test("PCK and OKS by hand: a keypoint on the threshold counts, one missing adds nothing")
    func poseScoreByHand() throws {
        // Torso: left_shoulder (0, 0) to right_hip (30, 40), 50 px; PCK threshold 10 px.
        let label = try PoseLabel.parse(
            Data(
                #"{"keypoints": [{"name": "left_shoulder", "x": 0, "y": 0}, {"name": "right_hip", "x": 30, "y": 40}, {"name": "nose", "x": 10, "y": 10}], "box": [0, 0, 100, 200]}"#
                    .utf8)
        ).get()
        let answer = [
            PoseKeypoint(name: "left_shoulder", x: 6, y: 8, score: 1),  // 10 px off: right
            PoseKeypoint(name: "right_hip", x: 30, y: 51, score: 1),  // 11 px off: wrong
        ]
        let score = PoseScore(answer, label: label)
        #expect(score.keypoints.map(\.right) == [true, false, false])
        // exp(-d² / (2 · area · (2σ)²)), area 20000, the nose missing: 0.
        let shoulder = exp(-100.0 / (2 * 20000 * pow(2 * 0.079, 2)))
        let hip = exp(-121.0 / (2 * 20000 * pow(2 * 0.107, 2)))
        #expect(abs(score.oks - (shoulder + hip) / 3) < 1e-12)
    }
}
