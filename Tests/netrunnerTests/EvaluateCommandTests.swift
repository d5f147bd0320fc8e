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

    @Test(
        "Two evaluate shards merged: the single run's results line for line and the same report; wrong merges refused")
    func shards() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let single = try evaluate(Self.imagenet, Self.faces, "--output", folder.path("single"), "--no-progress")
        #expect(single.status == 0, "\(single.stderr)")
        for index in 0..<2 {
            let shard = try evaluate(
                Self.imagenet, Self.faces, "--output", folder.path("shard\(index)"), "--shard", "\(index)/2",
                "--no-progress")
            #expect(shard.status == 0, "\(shard.stderr)")
            #expect(shard.stdout.contains("shard \(index)/2, results in"), "\(shard.stdout)")
            #expect(
                !FileManager.default.fileExists(atPath: folder.path("shard\(index)/imagenet-sample-photos/report.json"))
            )
        }
        let merge = try ProcessResult.run(
            Fixtures.netrunner,
            [
                "evaluate", "merge", Self.imagenet, Self.faces, "--models", Self.models, "--shards",
                folder.path("shard1"),
                "--shards", folder.path("shard0"), "--output", folder.path("merged"),
            ])
        #expect(merge.status == 0, "\(merge.stderr)")
        #expect(merge.stdout.contains("0 runs to go") || merge.stderr.contains("0 runs to go"), "\(merge.stderr)")
        for test in ["imagenet-sample-photos", "faces-sample-photos"] {
            #expect(
                try ResultsLines.withoutLatencies(folder.path("merged/\(test)/results.jsonl"))
                    == ResultsLines.withoutLatencies(folder.path("single/\(test)/results.jsonl")))
            let merged = try report(folder.path("merged/\(test)/report.json"))
            let whole = try report(folder.path("single/\(test)/report.json"))
            #expect(merged.models.map(\.metric) == whole.models.map(\.metric) && !merged.models.isEmpty)
        }
        let missing = try ProcessResult.run(
            Fixtures.netrunner,
            [
                "evaluate", "merge", Self.imagenet, "--models", Self.models, "--shards", folder.path("shard0"),
                "--output",
                folder.path("merged-2"),
            ])
        #expect(missing.status != 0 && missing.stderr.contains("shard 1/2 missing"), "\(missing.stderr)")
        // A shard's folder is not resumed as another shard.
        let mixed = try evaluate(Self.faces, "--output", folder.path("shard0"), "--shard", "1/2", "--no-progress")
        #expect(mixed.status != 0 && mixed.stderr.contains("holds the runs of shard 0/2"), "\(mixed.stderr)")
    }

    /// Two versions of one model share their `model.json` id; before, their runs were counted as
    /// one model's (both rows showed the same mixed figures).
    @Test("Two compared models with one id are told apart: ID and ID#2, each with its own runs")
    func repeatedIDs() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let float = Fixtures.path("Models/bundles/mobilenet_v2_1.0_224_float32.tiobundle")
        let copy = folder.path("copy.tiobundle")
        try FileManager.default.copyItem(atPath: float, toPath: copy)
        let uint8 = Fixtures.path("Models/bundles/mobilenet_v2_1.0_224_uint8.tiobundle")
        let run = try evaluate(
            Self.imagenet, "--compare", float, "--compare", uint8, "--compare", copy, "-o", folder.path("out"))
        #expect(run.status == 0, "\(run.stderr)")
        let models = try report(folder.path("out") + "/imagenet-sample-photos/report.json").models
        #expect(
            models.map(\.id) == [
                "mobilenet-v2-1.0-224-float32", "mobilenet-v2-1.0-224-uint8", "mobilenet-v2-1.0-224-float32#2",
            ])
        #expect(models.map(\.runs) == [24, 24, 24])
        #expect(models[0].metric == models[2].metric)
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
        // Mistakes are counted by the test's metric (top 5): the uint8 model misses 2 images at
        // top-1 but only 1 at top-5.
        #expect(
            html.contains("Mistakes: 1 of 8 labelled images (by the test&#39;s metric")
                || html.contains("Mistakes: 1 of 8 labelled images (by the test's metric"), "mistakes by top-5")
        #expect(!html.contains("Mistakes: 2 of 8"))
        #expect(html.contains(">runs</text>"), "histograms have a count axis")
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
        #expect(first.stderr.contains("1 image could not be evaluated (1 run failed, under 1 model)"))
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

/// `evaluate` against hostile and mistaken test bundles: nothing outside the bundle is read,
/// a huge plan costs nothing, ids never share a folder, and each mistake gets a message that
/// says what to do.
@Suite("netrunner evaluate: hostile and mistaken tests")
struct EvaluateHostileTests {
    static let models = Fixtures.path("Models")

    /// A one-model classification test bundle with the given images and labels.
    func bundle(
        in folder: TemporaryFolder, name: String = "t", id: String = "t", images: [String],
        labels: [String: String] = [:], iterations: Int = 1, models: [String] = ["mobilenet-v2-1.0-224-uint8"]
    ) throws -> String {
        let path = folder.path(name + ".testbundle")
        try FileManager.default.createDirectory(atPath: path + "/images", withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg"), toPath: path + "/images/coffee.jpg")
        let imageList = images.map { image in
            image.hasPrefix("http") || image.hasPrefix("file:")
                ? "{\"type\": \"url\", \"url\": \"\(image)\"}" : "{\"type\": \"file\", \"path\": \"\(image)\"}"
        }
        let labelList = (["images/coffee.jpg": "espresso"].merging(labels) { $1 }).map {
            "{\"path\": \"\($0.key)\", \"inference_results\": {\"classification\": {\"\($0.value)\": \"\"}}}"
        }
        let models = models.map { "\"\($0)\"" }.joined(separator: ", ")
        let test = """
            {"name": "\(name)", "id": "\(id)", "version": "1", "models": [\(models)],
             "options": {"iterations": \(iterations), "metric": "EvaluationMetricAccuracyTop5"},
             "images": [\(imageList.joined(separator: ", "))],
             "labels": [\(labelList.joined(separator: ", "))]}
            """
        try Data(test.utf8).write(to: URL(fileURLWithPath: path + "/test.json"))
        return path
    }

    func evaluate(_ arguments: [String]) throws -> ProcessResult {
        try ProcessResult.run(Fixtures.netrunner, ["evaluate", "--models", Self.models, "--no-progress"] + arguments)
    }

    @Test("Files outside the bundle are never read: links out, ../, file:// URLs; their bytes reach no output")
    func confinement() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        // A "secret" outside the bundle, and a real photo outside it too.
        let secret = try folder.write(Data("root:$6$SECRET-HASH:19000:0:99999:7:::\n".utf8), named: "shadow")
        try FileManager.default.copyItem(
            atPath: Fixtures.path("Tests/Fixtures/Photos/test/eagle.jpg"), toPath: folder.path("outside.jpg"))
        let path = try bundle(
            in: folder,
            images: [
                "images/coffee.jpg", "images/link.jpg", "images/photo-link.jpg", "file://" + secret,
            ])
        try FileManager.default.createSymbolicLink(atPath: path + "/images/link.jpg", withDestinationPath: secret)
        try FileManager.default.createSymbolicLink(
            atPath: path + "/images/photo-link.jpg", withDestinationPath: folder.path("outside.jpg"))
        let out = folder.path("out")
        let result = try evaluate([path, "-o", out])
        #expect(result.status == 1, "the refused images count as failed: \(result.stderr)")
        let results = try String(contentsOfFile: out + "/t/results.jsonl", encoding: .utf8)
        let html = try String(contentsOfFile: out + "/t/report.html", encoding: .utf8)
        let json = try String(contentsOfFile: out + "/t/report.json", encoding: .utf8)
        for (name, text) in [("results", results), ("html", html), ("json", json), ("stderr", result.stderr)] {
            #expect(!text.contains("SECRET") && !text.contains("root:"), "\(name) holds the secret")
        }
        #expect(results.split(separator: "\n").count == 4)
        // Each link out named with where it points (issue 32, finding 5), never what it holds.
        let realSecret = URL(fileURLWithPath: secret).resolvingSymlinksInPath().path
        #expect(results.contains("images/link.jpg is a link to \(realSecret), outside the test bundle; refused"))
        #expect(results.contains("images/photo-link.jpg is a link to "), "\(results)")
        #expect(results.contains("only files inside the test bundle and http(s) URLs are read"))
        // Only the photo inside the bundle became a thumbnail.
        #expect(html.components(separatedBy: "data:image/jpeg;base64,").count <= 2)
        #expect(result.stdout.contains("1/4 images"), "\(result.stdout)")
        // A path with ../ is refused before anything runs.
        let escaping = try bundle(in: folder, name: "escape", images: ["images/coffee.jpg", "../outside.jpg"])
        let refused = try evaluate([escaping, "-o", folder.path("out2")])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("expected a path inside the test bundle"), "\(refused.stderr)")
    }

    @Test("A million iterations are not planned in memory: results start at once")
    func hugePlan() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        // Eight images a million times: planned up front, that was 8,000,000 runs in memory.
        let names = ["images/coffee.jpg"] + (1...7).map { "images/copy\($0).jpg" }
        let path = try bundle(in: folder, images: names, iterations: 1_000_000)
        for name in names.dropFirst() {
            try FileManager.default.copyItem(
                atPath: Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg"), toPath: path + "/" + name)
        }
        let out = folder.path("out")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixtures.netrunner)
        process.arguments = ["evaluate", "--models", Self.models, "--no-progress", path, "-o", out]
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        defer {
            process.interrupt()
            process.waitUntilExit()
        }
        var lines = 0
        // Seconds in a plain build; an AddressSanitizer build starts several times slower.
        for _ in 0..<900 where lines < 20 {
            Thread.sleep(forTimeInterval: 0.1)
            lines =
                ((try? String(contentsOfFile: out + "/t/results.jsonl", encoding: .utf8)) ?? "")
                .split(separator: "\n").count
        }
        #expect(lines >= 20, "results are written within seconds")
        guard process.isRunning else {
            let message = String(decoding: errors.fileHandleForReading.availableData, as: UTF8.self)
            Issue.record("evaluate stopped: \(message)")
            return
        }
        let status = try String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)
        let rss =
            status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
            .flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") } ?? 0
        // AddressSanitizer's shadow memory and quarantine make resident memory meaningless there.
        if ProcessInfo.processInfo.environment["ASAN_OPTIONS"] == nil {
            #expect(rss > 0 && rss < 250_000, "resident memory \(rss) kB with 8,000,000 runs to go")
        }
    }

    @Test("Test ids differing only in punctuation get folders of their own")
    func idCollisions() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let first = try bundle(in: folder, name: "a", id: "cats/dogs", images: ["images/coffee.jpg"])
        let second = try bundle(in: folder, name: "b", id: "cats:dogs", images: ["images/coffee.jpg"])
        let plain = try bundle(in: folder, name: "c", id: "cats_dogs", images: ["images/coffee.jpg"])
        let out = folder.path("out")
        let result = try evaluate([first, second, plain, "-o", out])
        #expect(result.status == 0, "\(result.stderr)")
        let folders = try FileManager.default.contentsOfDirectory(atPath: out).filter { !$0.hasSuffix(".html") }
            .sorted()
        #expect(folders.count == 3, "\(folders)")
        #expect(folders.contains("cats_dogs"))
        for name in folders {
            let lines = try String(contentsOfFile: out + "/" + name + "/results.jsonl", encoding: .utf8)
            #expect(lines.split(separator: "\n").count == 1, "\(name): each test ran its own image")
        }
    }

    @Test(
        "Mistakes get messages that say what to do",
        arguments: [
            ("syntax", "line 2, column 1: expected ',' or '}' after a member"),
            ("label", "warning: "),
            ("models", "--models /nonexistent/models: no such folder"),
            ("three", "1 image could not be evaluated (3 runs failed, under 3 models)"),
        ])
    func messages(kind: String, message: String) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var arguments: [String]
        switch kind {
        case "syntax":
            let path = try bundle(in: folder, images: ["images/coffee.jpg"])
            try Data("{\"name\": \"t\"\n".utf8).write(to: URL(fileURLWithPath: path + "/test.json"))
            arguments = [path]
        case "label":
            let path = try bundle(in: folder, images: ["images/coffee.jpg"], labels: ["images/coffee.jpg": "espreso"])
            arguments = [path]
        case "models":
            let path = try bundle(in: folder, images: ["images/coffee.jpg"])
            let run = try ProcessResult.run(
                Fixtures.netrunner, ["evaluate", "--models", "/nonexistent/models", path, "-o", folder.path("out")])
            #expect(run.status == 64)
            #expect(run.stderr.contains(message), "\(run.stderr)")
            return
        default:
            let path = try bundle(
                in: folder, images: ["images/coffee.jpg", "images/broken.jpg"],
                models: ["mobilenet-v2-1.0-224-uint8", "mobilenet-v2-1.0-224-float32", "mobilenet-v2-1.0-224-int8"])
            try Data("broken".utf8).write(to: URL(fileURLWithPath: path + "/images/broken.jpg"))
            arguments = [path]
        }
        let result = try evaluate(arguments + ["-o", folder.path("out")])
        #expect(result.stderr.contains(message), "\(kind): \(result.stderr)")
        if kind == "label" {
            #expect(result.stderr.contains("label \"espreso\" is not one of model mobilenet-v2-1.0-224-uint8's labels"))
            #expect(result.stderr.contains("(closest: \"espresso\")"))
        }
        if kind == "syntax" { #expect(result.stderr.contains("test.json is not valid JSON")) }
    }
}
