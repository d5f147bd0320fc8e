import Foundation
import NetRunnerTestSupport
import Testing

/// `netrunner evaluate` as a user runs it on test bundles: summaries on stdout, results and
/// reports on disk, clear errors, resumable runs.
@Suite("netrunner evaluate")
struct EvaluateCommandTests {
    static let imagenet = Fixtures.path("TestBundles/imagenet-sample.testbundle")
    static let faces = Fixtures.path("TestBundles/faces.testbundle")
    static let models = Fixtures.path("Models")

    struct Report: Decodable, Equatable {
        struct Model: Decodable, Equatable {
            struct Failure: Decodable, Equatable {
                var image: String
                var error: String
            }
            var id: String
            var evaluated: Int
            var runs: Int
            var metric: [String: Double]
            var failures: [Failure]
        }
        var models: [Model]
    }

    func evaluate(_ arguments: String...) throws -> ProcessResult {
        try ProcessResult.run(Fixtures.netrunner, ["evaluate", "--models", Self.models] + arguments)
    }

    func report(_ path: String) throws -> Report {
        try JSONDecoder().decode(Report.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    @Test("The sample bundles print accuracy and latency per model and write JSON and HTML reports")
    func sampleBundles() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let out = folder.path("out")
        let result = try evaluate(Self.imagenet, Self.faces, "--compare", "mobilenet-v2-1.0-224-uint8", "-o", out)
        #expect(result.status == 2 || result.status != 0, "the faces test cannot run a classifier: \(result.stderr)")
        #expect(
            result.stderr.contains("does classification, but EvaluationMetricMeanAveragePrecision scores detection"))
        #expect(!FileManager.default.fileExists(atPath: out), "nothing is written when a test cannot run")

        let run = try evaluate(Self.imagenet, Self.faces, "-o", out)
        #expect(run.status == 0, "\(run.stderr)")
        for id in ["mobilenet-v2-1.0-224-uint8", "mobilenet-v2-1.0-224-float32", "mobilenet-v2-1.0-224-int8"] {
            #expect(run.stdout.contains("  \(id): 8/8 images, classification_accuracy "), "\(run.stdout)")
        }
        #expect(run.stdout.contains("face-detection-short-range: 6/6 images, mAP50 "))
        #expect(run.stdout.contains("inference ms mean"))
        let classifiers = try report(out + "/imagenet-sample-photos/report.json")
        #expect(classifiers.models.map(\.runs) == [24, 24, 24])
        let html = try String(contentsOfFile: out + "/imagenet-sample-photos/report.html", encoding: .utf8)
        #expect(html.contains("data:image/jpeg;base64,") && !html.contains("<script"))
        #expect(FileManager.default.fileExists(atPath: out + "/report.html"), "one page for all the tests")
        let lines = try String(contentsOfFile: out + "/faces-sample-photos/results.jsonl", encoding: .utf8)
        #expect(lines.split(separator: "\n").count == 18)
    }

    @Test("An unreadable image is counted and listed; an interrupted run resumes to the same report")
    func failuresAndResume() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let bundle = folder.path("cats.testbundle")
        try FileManager.default.createDirectory(atPath: bundle + "/images", withIntermediateDirectories: true)
        for name in ["chelsea.png", "coffee.jpg", "eagle.jpg"] {
            try FileManager.default.copyItem(
                atPath: Fixtures.path("Tests/Fixtures/Photos/test/" + name), toPath: bundle + "/images/" + name)
        }
        try Data([0xFF, 0xD8, 0xFF]).write(to: URL(fileURLWithPath: bundle + "/images/broken.jpg"))
        let test = """
            {"name": "Cats", "id": "cats", "version": "1", "models": ["mobilenet-v2-1.0-224-uint8"],
             "options": {"iterations": 4, "metric": "EvaluationMetricAccuracyTop1"},
             "images": [{"type": "file", "path": "images/chelsea.png"}, {"type": "file", "path": "images/coffee.jpg"},
                        {"type": "file", "path": "images/broken.jpg"}, {"type": "file", "path": "images/eagle.jpg"}],
             "labels": [{"path": "images/chelsea.png", "inference_results": {"classification": {"tabby": "", "Egyptian cat": ""}}},
                        {"path": "images/coffee.jpg", "inference_results": {"classification": {"cup": ""}}},
                        {"path": "images/broken.jpg", "inference_results": {"classification": {"tabby": ""}}},
                        {"path": "images/eagle.jpg", "inference_results": {"classification": {"bald eagle": ""}}}]}
            """
        try Data(test.utf8).write(to: URL(fileURLWithPath: bundle + "/test.json"))
        let out = folder.path("out")
        let first = try evaluate(bundle, "-o", out)
        #expect(first.status == 1, "an image failed: \(first.stderr)")
        #expect(first.stderr.contains("1 image(s) could not be evaluated"))
        #expect(
            first.stdout.contains("mobilenet-v2-1.0-224-uint8: 3/4 images, classification_accuracy 0.667"),
            "\(first.stdout)")
        let whole = try report(out + "/cats/report.json")
        #expect(whole.models.first?.failures.map(\.image) == ["images/broken.jpg"])
        #expect(whole.models.first?.failures.first?.error.contains("broken.jpg") == true)
        #expect(whole.models.first?.runs == 12)

        // Interrupted half-way, in the middle of a line.
        let resultsPath = out + "/cats/results.jsonl"
        let results = try Data(contentsOf: URL(fileURLWithPath: resultsPath))
        try results.prefix(results.count / 2).write(to: URL(fileURLWithPath: resultsPath))
        let resumed = try evaluate(bundle, "-o", out)
        #expect(resumed.stderr.contains("Cats: resuming \(resultsPath)"), "\(resumed.stderr)")
        let after = try report(out + "/cats/report.json")
        #expect(after.models.first?.metric == whole.models.first?.metric)
        #expect(after.models.first?.runs == 12 && after.models.first?.failures == whole.models.first?.failures)
        let text = try String(contentsOfFile: resultsPath, encoding: .utf8)
        #expect(text.split(separator: "\n").count == 16 && text.hasSuffix("\n"))
    }

    @Test("Malformed test.json, unknown models and missing bundles get one clear line each")
    func badInput() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let bundle = folder.path("bad.testbundle")
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        try Data("{\"name\": \"x\",".utf8).write(to: URL(fileURLWithPath: bundle + "/test.json"))
        let malformed = try evaluate(bundle, "-o", folder.path("out"))
        #expect(malformed.status == 1 && malformed.stderr.contains(bundle + "/test.json"), "\(malformed.stderr)")

        let test = try String(contentsOfFile: Self.faces + "/test.json", encoding: .utf8)
            .replacingOccurrences(of: "\"face-detection-short-range\"", with: "\"yolo\"")
            .replacingOccurrences(of: "images/", with: Self.faces + "/images/")
        try Data(test.utf8).write(to: URL(fileURLWithPath: bundle + "/test.json"))
        let unknown = try evaluate(bundle, "-o", folder.path("out"))
        #expect(unknown.status == 1, "\(unknown.stderr)")
        #expect(
            unknown.stderr.contains("a path inside the test bundle"),
            "absolute image paths are refused: \(unknown.stderr)")

        let relative = try String(contentsOfFile: Self.faces + "/test.json", encoding: .utf8)
            .replacingOccurrences(of: "\"face-detection-short-range\"", with: "\"yolo\"")
        try Data(relative.utf8).write(to: URL(fileURLWithPath: bundle + "/test.json"))
        try FileManager.default.copyItem(atPath: Self.faces + "/images", toPath: bundle + "/images")
        let missingModel = try evaluate(bundle, "-o", folder.path("out"))
        #expect(missingModel.status == 1)
        #expect(missingModel.stderr.contains("names model \"yolo\", which is not in"), "\(missingModel.stderr)")
        #expect(missingModel.stderr.contains("face-detection-short-range"), "the ids that exist are listed")

        let nowhere = try evaluate(folder.path("nowhere.testbundle"))
        #expect(nowhere.status == 1 && nowhere.stderr.contains("nowhere.testbundle/test.json"), "\(nowhere.stderr)")
        let compared = try evaluate(
            bundle, "--compare", Fixtures.path("Models/bundles/face_detection_short_range.tiobundle"), "-o",
            folder.path("out"))
        #expect(compared.status == 0, "a model given by path: \(compared.stderr)")
    }
}
