import Foundation
import NetRunnerTestSupport
import Testing

@testable import NetRunner
@testable import NetRunnerEvaluation

@Suite("Net Runner test.json")
struct TestBundleDescriptionTests {
    @Test("A test.json in Net Runner's form, with its trailing commas, parses field by field")
    func valid() throws {
        let test = try TestBundleDescription.parse(Data(Self.example.utf8))
        #expect(test.name == "MobileNet V2 on cats" && test.id == "mobilenet-cats" && test.version == "1")
        #expect(test.models == ["mobilenet-v2-100-224-unquantized", "mobilenet-v2-100-224-quantized"])
        #expect(test.iterations == 3 && test.metric == "EvaluationMetricAccuracyTop5")
        #expect(test.images == [.file("images/chelsea.jpg"), .url("https://example.com/coffee.jpg")])
        #expect(test.expectedClassifications["images/chelsea.jpg"] == ["Egyptian cat"])
        #expect(test.expectedClassifications["https://example.com/coffee.jpg"] == ["espresso", "cup"])

        let minimal = try TestBundleDescription.parse(
            Data(
                #"{"name":"n","id":"i","version":2,"models":["m"],"options":{"metric":"top1"},"images":[{"type":"file","path":"a.png"}]}"#
                    .utf8))
        #expect(minimal.iterations == 1 && minimal.version == "2" && minimal.expectedClassifications.isEmpty)
    }

    static let example = """
        {
          "name": "MobileNet V2 on cats",
          "id": "mobilenet-cats",
          "version": "1",
          "models": ["mobilenet-v2-100-224-unquantized", "mobilenet-v2-100-224-quantized",],
          "options": { "iterations": 3, "metric": "EvaluationMetricAccuracyTop5" },
          "images": [
            { "type": "file", "path": "images/chelsea.jpg" },
            { "type": "url", "url": "https://example.com/coffee.jpg" },
          ],
          "labels": [
            { "path": "images/chelsea.jpg", "inference_results": { "classification": { "Egyptian cat": "" } } },
            { "path": "https://example.com/coffee.jpg",
              "inference_results": { "classification": { "espresso": "", "cup": "" } } },
          ],
        }
        """

    @Test("Every problem is reported at once with its JSON path")
    func invalid() throws {
        let json = """
            {"name": "", "version": "1", "models": [], "options": {"iterations": 0},
             "images": [{"type": "file", "path": "../outside.jpg"}, {"type": "album_photo"}, {"type": "url"}, 7,
                        {"type": "file", "path": "ok.jpg"}],
             "labels": [{"path": "missing.jpg", "inference_results": {"classification": {"cat": ""}}},
                        {"path": "ok.jpg", "inference_results": {"classification": ["cat"]}},
                        {"path": "ok.jpg", "inference_results": {"detection": [{"label": "", "box": [1, 2]}]}}]}
            """
        do {
            _ = try TestBundleDescription.parse(Data(json.utf8), source: "bad.testbundle/test.json")
            Issue.record("parsed an invalid test.json")
        } catch {
            guard case .invalidTestDescription(let file, let problems) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(file == "bad.testbundle/test.json")
            let paths = problems.map(\.path)
            #expect(
                paths == [
                    "$.name", "$.id", "$.models", "$.options.iterations", "$.options.metric", "$.images[0].path",
                    "$.images[1].type", "$.images[2].url", "$.images[3]", "$.labels[0].path",
                    "$.labels[1].inference_results.classification", "$.labels[2].path",
                    "$.labels[2].inference_results.detection[0].label",
                    "$.labels[2].inference_results.detection[0].box",
                ])
            #expect(
                problems[5].description
                    == "$.images[0].path: expected a path inside the test bundle, found \"../outside.jpg\"")
            #expect(error.errorDescription?.contains("bad.testbundle/test.json") == true)
        }
    }

    @Test("3000 mutated test.json files parse or throw EvaluationError; huge numbers are refused")
    func fuzz() throws {
        var generator = SeededGenerator(seed: 0x7465_7374_6A73_6F6E)
        var parsed = 0
        var rejected = 0
        let faces = try String(
            contentsOfFile: Fixtures.path("TestBundles/faces.testbundle/test.json"), encoding: .utf8)
        for round in 0..<3000 {
            // Half classification labels, half detection boxes.
            let bytes = mutatedJSON(round % 2 == 0 ? Self.example : faces, using: &generator)
            do {
                _ = try TestBundleDescription.parse(Data(bytes), source: "fuzz.json")
                parsed += 1
            } catch {
                rejected += 1
            }
        }
        print("test.json fuzz: \(parsed) parsed, \(rejected) rejected")
        #expect(rejected > 500 && parsed > 100)
        let boxes = try TestBundleDescription.parse(Data(faces.utf8)).expectedDetections
        #expect(boxes["images/two_portraits.jpg"]?.count == 2 && boxes["images/coffee.jpg"] == [])
        #expect(boxes["images/astronaut.jpg"]?.first?.box == BoundingBox(minX: 181, minY: 84, maxX: 274, maxY: 175))

        for hostile in [
            Self.example.replacingOccurrences(of: "\"iterations\": 3", with: "\"iterations\": 1e300"),
            Self.example.replacingOccurrences(of: "\"iterations\": 3", with: "\"iterations\": 2.5"),
        ] {
            #expect(throws: EvaluationError.self) { try TestBundleDescription.parse(Data(hostile.utf8)) }
        }
        let bigVersion = Self.example.replacingOccurrences(of: "\"version\": \"1\"", with: "\"version\": 1e300")
        #expect(try TestBundleDescription.parse(Data(bigVersion.utf8)).version == "1e+300")
    }

    @Test("Malformed JSON and a non-object are refused with the file's name")
    func malformed() {
        #expect(throws: EvaluationError.self) { try TestBundleDescription.parse(Data("{\"name\": ".utf8)) }
        do {
            _ = try TestBundleDescription.parse(Data("[1]".utf8), source: "t.json")
        } catch {
            #expect(
                error
                    == .invalidTestDescription(
                        file: "t.json", problems: [.init(path: "$", expected: "an object", found: "an array of 1")]))
        }
        do {
            _ = try TestBundleDescription.parse(Data("{".utf8), source: "t.json")
        } catch {
            guard case .malformedJSON(let file, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(file == "t.json")
        }
    }
}
