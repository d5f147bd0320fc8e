import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import NetRunner
import NetRunnerEngine
import NetRunnerEvaluation
import NetRunnerImage
import NetRunnerJobs
import NetRunnerTestSupport
import Testing

/// docs/adding-a-task.md kept true: a task written and registered in this folder only
/// (``MeanScoreDefinition``, ``MeanScoreEvaluation``) runs through the library (``ImageTask``), a
/// bulk job, the results line (JSON Lines and CSV), the printers, the annotator, a headless
/// evaluation with its reports and the server's `/run` route.
@Suite("Adding a task")
struct AddingATaskTests {
    static let photos = Fixtures.path("Tests/Fixtures/Photos/test")
    static let classifier = Fixtures.path("Models/bundles/mobilenet_v2_1.0_224_uint8.tiobundle")

    /// Registers the task, and its evaluation, once per process.
    static let registered: Void = {
        registerMeanScoreTask()
        TaskEvaluationRegistry.register(MeanScoreEvaluation())
    }()

    /// The classifier's bundle copied with its `model.type` naming the new task.
    static func meanScoreBundle(in folder: TemporaryFolder) throws -> String {
        _ = registered
        let bundle = folder.path("mean.tiobundle")
        try FileManager.default.copyItem(atPath: classifier, toPath: bundle)
        let description = bundle + "/model.json"
        let text = try String(contentsOfFile: description, encoding: .utf8)
        #expect(text.contains("\"image.classification.imagenet\""))
        try text.replacingOccurrences(of: "\"image.classification.imagenet\"", with: "\"image.mean_score\"")
            .write(toFile: description, atomically: true, encoding: .utf8)
        return bundle
    }

    /// The classifier's own top-1 of an image: what the new task's `top` must name.
    static func classifierTop(_ image: String) throws -> String {
        guard case .classification(let result) = try ImageTask(modelAt: classifier).run(fileAt: image),
            let best = result.categories.first
        else { throw NetRunnerError.invalidOption(name: "answer", reason: "not a classification") }
        return best.displayName ?? best.label ?? ""
    }

    static func meanScore(_ answer: ImageAnswer?) -> MeanScore? {
        guard case .other(let result)? = answer else { return nil }
        return result as? MeanScore
    }

    @Test("The model's type picks the task; ImageTask runs it and answers .other")
    func library() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-task")
        defer { folder.remove() }
        let task = try ImageTask(modelAt: try Self.meanScoreBundle(in: folder))
        #expect(task.kind == MeanScore.kind)
        #expect(ImageTask.kind(type: "image.mean_score") == MeanScore.kind)
        #expect(VisionTaskRegistry.definition(verb: "mean-score")?.kind == MeanScore.kind)
        let image = Self.photos + "/coffee.jpg"
        let answer = try task.run(fileAt: image)
        #expect(answer.kind == MeanScore.kind)
        let score = try #require(Self.meanScore(answer))
        // A softmax over ImageNet's 1000 classes: the scores sum to 1 (uint8: to within 5%).
        #expect(score.classes == 1000)
        #expect(abs(score.mean * 1000 - 1) < 0.05, "mean \(score.mean)")
        let top = try Self.classifierTop(image)
        #expect(score.top == top && top == "espresso")
        #expect(answer.textLines(image: "coffee.jpg").last?.contains("over 1000 classes, best espresso") == true)
    }

    @Test("A BatchingVisionTask runs in batches: its definition says so, each answer is the image's alone")
    func batches() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-task")
        defer { folder.remove() }
        let task = try ImageTask(modelAt: try Self.meanScoreBundle(in: folder))
        #expect(task.definition?.runsInBatches == true)
        #expect(VisionTaskRegistry.definition(for: .pose)?.runsInBatches == false)
        let files = ["chelsea.png", "coffee.jpg", "eagle.jpg"].map { Self.photos + "/" + $0 }
        let prefetcher = ImagePrefetcher(
            paths: files, options: task.decodingOptions, preprocessing: task.preprocessing)
        var batch: [(image: PreparedImage, decodeTime: Duration)] = []
        while let item = prefetcher.next() { batch.append((try item.prepared.get(), item.decodeTime)) }
        let together = try task.run(batch: batch, capacity: 4).map(Self.meanScore)
        let alone = try batch.map { Self.meanScore(try task.run($0.image, decodeTime: $0.decodeTime)) }
        // On the CPU a batch's scores are bit for bit the images' alone; the classifier's tops.
        #expect(together.count == 3 && together.allSatisfy { $0 != nil })
        #expect(together.map { $0?.mean } == alone.map { $0?.mean })
        #expect(together.map { $0?.top } == (try files.map(Self.classifierTop)))
    }

    @Test("A bulk job writes its results lines, in JSON Lines and CSV, and reads them back")
    func bulk() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-task")
        defer { folder.remove() }
        let model = try LoadedModel(.path(try Self.meanScoreBundle(in: folder)))
        let files = ImageFiles.listing(of: [Self.photos]).files
        for format in [BulkResultsFile.Format.jsonLines, .csv] {
            let output = folder.path("results.\(format.rawValue)")
            var settings = BulkSettings(roots: [Self.photos], files: files, model: model)
            (settings.output, settings.format, settings.threads) = (output, format, 2)
            let job = try BulkJob(settings)
            #expect(job.kind == MeanScore.kind)
            let tally = try job.run()
            #expect(tally.count == files.count && tally.failed == 0)
            let written = try String(contentsOfFile: output, encoding: .utf8)
            if format == .csv {
                #expect(written.contains(",espresso,") && written.contains("classes:1000"), "\(written)")
                continue
            }
            let records = try BulkResultsFile.records(in: output)
            #expect(records.map(\.image) == files)
            for record in records {
                let score = try #require(Self.meanScore(record.answer), "\(record)")
                let top = try Self.classifierTop(record.image)
                #expect(score.classes == 1000 && score.top == top)
            }
            #expect(written.contains("\"inference_results\":{\"mean_score\":{"))
        }
    }

    @Test("The results line round-trips; the annotator draws the task's labels")
    func resultsLineAndDrawing() throws {
        _ = Self.registered
        let score = MeanScore(
            mean: 0.001, classes: 1000, top: "espresso",
            timings: ResultTimings(decoding: 1.5, preprocessing: 2, inference: 3))
        let record = ResultsLine(image: "coffee.jpg", model: "mean", answer: score.imageAnswer)
        let line = BulkResultsFile.Format.jsonLines.line(for: record)
        let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let results = try #require(object["inference_results"] as? [String: Any])
        let written = try #require(results["mean_score"] as? [String: Any])
        #expect(written["classes"] as? Int == 1000 && written["top"] as? String == "espresso")
        #expect(object["total_latency"] as? Double == 6.5)
        let decoded = try JSONDecoder().decode(ResultsLine.self, from: Data(line.utf8))
        #expect(decoded == record)

        let image = try PixelBuffer(width: 320, height: 240, format: .rgb24)
        let drawn = try Annotator.draw(score.imageAnswer, on: image)
        #expect(drawn != image && drawn.size == image.size)
        #expect(score.imageAnswer.scaled(from: image.size, to: PixelSize(width: 640, height: 480)) == score.imageAnswer)
    }

    @Test("A test bundle evaluates it: its labels, its metric, the report and the HTML page")
    func evaluation() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-task")
        defer { folder.remove() }
        let bundle = try Self.meanScoreBundle(in: folder)
        let images = ["coffee.jpg", "eagle.jpg"]
        var labels: [String] = []
        for image in images {
            try FileManager.default.copyItem(atPath: Self.photos + "/" + image, toPath: folder.path(image))
            labels.append(
                #"{"path": "\#(image)", "inference_results": {"mean_score": {"top": "\#(try Self.classifierTop(Self.photos + "/" + image))"}}}"#
            )
        }
        // One label the model gets wrong: the metric counts it.
        labels[1] = labels[1].replacingOccurrences(of: #""top": ""#, with: #""top": "not "#)
        let json = """
            {"name": "Mean score", "id": "mean-score", "version": "1", "models": ["mean"],
             "options": {"iterations": 1, "metric": "mean_score_top"},
             "images": [\(images.map { #"{"type": "file", "path": "\#($0)"}"# }.joined(separator: ", "))],
             "labels": [\(labels.joined(separator: ", "))]}
            """
        try json.write(toFile: folder.path("test.json"), atomically: true, encoding: .utf8)
        let test = try TestBundle(path: folder.url.path)
        #expect(test.description.labels(of: MeanScore.kind).count == 2)
        let runner = try TestBundleRunner(test: test, models: [.init(id: "mean", path: bundle)])
        #expect(runner.metric.kind == MeanScore.kind)
        let task = try runner.loadTask(runner.models[0])
        #expect(runner.unknownLabels(for: task).map { $0.label }.allSatisfy { $0.hasPrefix("not ") })
        var records: [ResultsLine] = []
        try runner.run(runner.models[0], task: task, skipping: []) { records.append($0) }
        #expect(records.count == 2 && records.allSatisfy { $0.answer?.kind == MeanScore.kind })
        let report = EvaluationReport.build(
            test: test, metric: runner.metric, models: [(id: "mean", path: bundle, kind: MeanScore.kind)],
            records: records, latencyNote: "")
        let model = try #require(report.models.first)
        #expect(model.metric == ["mean_score_top": 0.5] && model.mistakes.count == 1)
        let page = HTMLReport.render([report])
        #expect(page.contains("50.0%") && page.contains("by the test&#39;s metric"))
        // The labels of another task are refused with the forms named.
        let wrong = json.replacingOccurrences(of: #""metric": "mean_score_top""#, with: #""metric": "top1""#)
        try wrong.write(toFile: folder.path("test.json"), atomically: true, encoding: .utf8)
        #expect {
            try TestBundleRunner(test: TestBundle(path: folder.url.path), models: [.init(id: "mean", path: bundle)])
        } throws: { error in
            "\(error)".contains("labels are mean scores (give inference_results.classification, or mean_score_top)")
        }
    }

    @Test(
        "The server serves it: /v1/models/{id}/run and /mean-score answer with its results line, described by its schema"
    )
    func server() async throws {
        let folder = try TemporaryFolder(prefix: "netrunner-task")
        defer { folder.remove() }
        let model = ServedModel(
            id: "mean", model: try LoadedModel(.path(try Self.meanScoreBundle(in: folder))), origin: "test")
        #expect(model.kind == MeanScore.kind)
        let engine = InferenceEngine(models: [model], configuration: .init(threads: 1))
        defer { Task { await engine.shutdown() } }
        try await InProcessServer.started(engine, ready: false)
        let image = Self.photos + "/coffee.jpg"
        let photo = try Data(contentsOf: URL(fileURLWithPath: image))
        let top = try Self.classifierTop(image)
        try await InProcessServer.test(engine: engine) { client in
            // /run, and the task's own route by its verb (documented, as every task's is).
            for route in ["run", "mean-score"] {
                try await client.execute(
                    uri: "/v1/models/mean/\(route)", method: .post, headers: [.contentType: "image/jpeg"],
                    body: ByteBuffer(bytes: photo)
                ) { response in
                    #expect(response.status == .ok, "\(route)")
                    let body = Data(response.body.readableBytesView)
                    let record = try JSONDecoder().decode(ResultsLine.self, from: body)
                    #expect(record.model == "mean")
                    let score = try #require(Self.meanScore(record.answer), "\(String(decoding: body, as: UTF8.self))")
                    #expect(score.classes == 1000 && score.top == top)
                }
            }
            try await client.execute(uri: "/openapi.json", method: .get) { response in
                let text = String(buffer: response.body)
                #expect(text.contains("\"/v1/models/{id}/mean-score\""))
                // Its results, in the answers' schema, are its definition's schema.
                var node: Any? = try JSONSerialization.jsonObject(with: Data(text.utf8))
                for key in ["components", "schemas", "ResultLine", "properties", "inference_results", "properties"] {
                    node = (node as? [String: Any])?[key]
                }
                let results = node as? [String: Any]
                let own = try JSONSerialization.jsonObject(with: Data(MeanScoreDefinition().resultsSchema.utf8))
                #expect((results?["mean_score"] as? NSDictionary) == (own as? NSDictionary), "\(results ?? [:])")
                #expect(Set(results?.keys.map { $0 } ?? []) == Set(VisionTaskRegistry.kinds.map(\.rawValue)))
            }
        }
    }
}
