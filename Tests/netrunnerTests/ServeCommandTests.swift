import Foundation
import NetRunnerTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `netrunner serve` as programs use it: the native API with curl-style uploads and browser
/// forms, KServe v2 with the real Triton client, errors with the right status. Hostile clients,
/// the OpenAPI document, back-pressure and graceful shutdown are `Robustness`
/// (ServeCommandTests+Robustness.swift), run serially with these.
@Suite("netrunner serve", .serialized)
struct ServeCommandTests {
    static let coffee = Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")
    static let portraits = Fixtures.path("Tests/Fixtures/Photos/faces/two_portraits.jpg")
    static let classifier = "mobilenet-v2-1.0-224-uint8"
    static let detector = "face-detection-short-range"

    /// What `bulk` prints for a photo (every pixel decoded, as the server does): the reference
    /// the server must equal (the CLI's answers are compared with Python's in the task tests).
    func cliLine(_ model: String, _ photo: String) async throws -> [String: Any] {
        // Waited for on a thread of its own: a server in this process may be running.
        let result = try await OffPool.run {
            try ProcessResult.run(
                Fixtures.netrunner,
                [
                    "bulk", "--exact-decoding", "--no-progress", "--model", Fixtures.path("Models/bundles/\(model)"),
                    photo,
                ])
        }
        #expect(result.status == 0, "\(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    func results(_ line: [String: Any]) -> NSDictionary {
        (line["inference_results"] as? [String: Any] ?? [:]) as NSDictionary
    }

    /// Issue 25: with the repository's Models folder, serve listed 11 models for 4 networks.
    @Test("The repository's Models folder: each network served once, bundles over their bare model files")
    func oneNetworkOnce() async throws {
        try await LiveServer.serve(["--no-import"], models: Fixtures.path("Models")) { server in
            let list = try await server.request("/v1/models")
            let ids = (list.json["models"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            #expect(
                ids.contains("mobilenet-v2-1.0-224-float32") && !ids.contains("mobilenet_v2_1.0_224_float32"), "\(ids)")
            #expect(ids.contains("mobilenet-v2-1.0-224-uint8") && !ids.contains("mobilenet_v2_1.0_224_uint8"), "\(ids)")
            #expect(ids.contains("face-detection-short-range-ssd") && !ids.contains("face_detection_short_range_ssd"))
            #expect(ids.contains("movenet-single-pose-lightning-ptq") && ids.contains("deeplabv3-mnv2-pascal-quant"))
            #expect(
                ids.contains("mobilenet-v1-1.0-224-quant-embedding-extractor")
                    && !ids.contains("mobilenet_v1_1.0_224_quant_embedding_extractor"))
            #expect(Set(ids).count == ids.count && ids.count == 10, "\(ids)")
        }
    }

    @Test(
        "The real Triton client works unchanged: health, metadata, JSON and binary tensors, classification, config, index, statistics, load and unload"
    )
    func tritonClient() async throws {
        let python = Fixtures.path(".venv-test/bin/python")
        try #require(
            FileManager.default.isExecutableFile(atPath: python), "run scripts/setup-test-python.sh (make test does)")
        let server = try await ServerProcess(["--threads", "2"])
        defer { server.expectCleanStop() }
        let run = try ProcessResult.run(
            python,
            [Fixtures.path("tools/serve/triton_check.py"), server.base.absoluteString, Self.classifier, Self.coffee])
        #expect(run.status == 0, "\(run.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(report["live"] as? Bool == true && report["ready"] as? Bool == true)
        // The catalog the command line builds lists the classifier first (the page's default).
        let models = try await server.request("/v1/models").json["models"] as? [[String: Any]] ?? []
        #expect(models.first?["id"] as? String == Self.classifier)
        #expect(report["model_ready"] as? Bool == true)
        // Pillow's centre crop and bilinear resize are our pipeline's, so the raw tensor path and
        // /v1 agree to the last digit.
        let native = try await server.request(
            "/v1/models/\(Self.classifier)/classify?maxResults=3", method: "POST",
            body: try Data(contentsOf: URL(fileURLWithPath: Self.coffee)), contentType: "image/jpeg")
        let categories =
            (native.json["inference_results"] as? [String: Any])?["classification"] as? [[String: Any]] ?? []
        let expected = categories.map { category in
            String(format: "%.6f", category["score"] as? Double ?? 0) + ":\(category["index"] as? Int ?? -1):"
                + (category["label"] as? String ?? "")
        }
        #expect(expected.first == "0.796875:967:espresso")
        #expect(report["classification_binary"] as? [String] == expected)
        #expect(report["classification_json"] as? [String] == expected)
        for tag in ["binary", "json"] {
            let raw = report["raw_\(tag)"] as? [String: Any]
            #expect(raw?["argmax"] as? Int == 967 && raw?["dtype"] as? String == "uint8")
            #expect(raw?["shape"] as? [Int] == [1, 1000])
        }
        #expect((report["unknown_model"] as? String)?.hasPrefix("[404]") == true)
        // Triton's model configuration extension (issue 25: a 404 with an empty body before).
        for key in ["config", "config_version_1"] {
            let config = try #require(report[key] as? [String: Any], "\(key): \(report[key] ?? "nothing")")
            #expect(config["name"] as? String == Self.classifier && config["platform"] as? String == "tensorflow_lite")
            #expect(config["backend"] as? String == "tflite" && config["max_batch_size"] as? Int == 0)
            let input = (config["input"] as? [[String: Any]])?.first
            #expect(input?["name"] as? String == "serving_default_image:0")
            #expect(input?["data_type"] as? String == "TYPE_UINT8" && input?["dims"] as? [Int] == [1, 224, 224, 3])
            let output = (config["output"] as? [[String: Any]])?.first
            #expect(output?["name"] as? String == "StatefulPartitionedCall:0")
            #expect(output?["data_type"] as? String == "TYPE_UINT8" && output?["dims"] as? [Int] == [1, 1000])
        }
        #expect((report["unknown_model_config"] as? String)?.hasPrefix("[404] No model \"no-such-model\"") == true)
        // The model repository index: every served model, ready, version 1.
        let served = try await server.request("/v1/models").json["models"] as? [[String: Any]] ?? []
        let index = try #require(report["index"] as? [[String: Any]], "\(report["index"] ?? "nothing")")
        #expect(index.map { $0["name"] as? String } == served.map { $0["id"] as? String } && index.count >= 3)
        for entry in index {
            #expect(entry["state"] as? String == "READY" && entry["version"] as? String == "1", "\(entry)")
            #expect(entry["reason"] as? String == "")
        }
        // Triton's statistics (issue 33: 404 before): the four inferences above, each stage timed.
        let stats = try #require(
            (report["stats"] as? [String: Any])?["model_stats"] as? [[String: Any]], "\(report["stats"] ?? "nothing")")
        #expect(stats.count == 1 && stats.first?["name"] as? String == Self.classifier)
        #expect(stats.first?["inference_count"] as? Int == 4 && stats.first?["execution_count"] as? Int == 4)
        #expect((stats.first?["last_inference"] as? Int ?? 0) > 1_700_000_000_000)
        let stages = stats.first?["inference_stats"] as? [String: [String: Int]] ?? [:]
        for stage in ["success", "queue", "compute_input", "compute_infer", "compute_output"] {
            #expect(stages[stage]?["count"] == 4 && (stages[stage]?["ns"] ?? 0) > 0, "\(stage): \(stages)")
        }
        #expect(stages["fail"]?["count"] == 0)
        let all = (report["stats_all"] as? [String: Any])?["model_stats"] as? [[String: Any]] ?? []
        #expect(all.map { $0["name"] as? String } == served.map { $0["id"] as? String })
        // Triton's model control: unload stops serving (UNAVAILABLE, "unloaded"), load serves again.
        let control = try #require(report["control"] as? [String: Any], "\(report["control"] ?? "nothing")")
        #expect(control["ready_after_unload"] as? Bool == false && control["ready_after_load"] as? Bool == true)
        let unloaded = (control["index_after_unload"] as? [[String: String]])?.first
        #expect(unloaded?["state"] == "UNAVAILABLE" && unloaded?["reason"] == "unloaded")
        #expect((control["infer_after_unload"] as? String)?.hasPrefix("[503]") == true, "\(control)")
        #expect(control["infer_after_load"] as? Int == 1000)
        for call in ["load_model", "unload_model", "get_inference_statistics"] {
            #expect((control["unknown_\(call)"] as? String)?.hasPrefix("[404]") == true, "\(call): \(control)")
        }
    }

    @Test("The live route answers each camera frame with a results line and what the model saw; the page is served")
    func liveRoute() async throws {
        let python = Fixtures.path(".venv-test/bin/python")
        try #require(FileManager.default.isExecutableFile(atPath: python), "run scripts/setup-test-python.sh")
        try await LiveServer.serve(["--threads", "1"]) { server in
            let folder = try TemporaryFolder()
            defer { folder.remove() }
            let broken = try folder.write(Data("not a frame".utf8), named: "broken.jpg")
            // The client waited for on a thread of its own: the server answering it is in this process.
            let base = server.base.absoluteString
            let run = try await OffPool.run {
                try ProcessResult.run(
                    python,
                    [
                        Fixtures.path("tools/serve/live_check.py"), base, Self.classifier, Self.coffee,
                        Fixtures.path("Tests/Fixtures/Photos/test/eagle.jpg"), broken,
                    ])
            }
            #expect(run.status == 0, "\(run.stderr)")
            let lines = try run.stdout.split(separator: "\n").map {
                try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            }
            #expect(lines.count == 4)
            let schema = try JSONSchemaCheck("docs/results-line.schema.json")
            for (index, line) in lines.prefix(3).enumerated() {
                #expect(line["frame"] as? Int == index + 1)
                let result = try #require(line["result"] as? [String: Any])
                let text = String(decoding: try JSONSerialization.data(withJSONObject: result), as: UTF8.self)
                #expect(schema.problems(ofLine: text).isEmpty, "\(text)")
            }
            func top(_ line: [String: Any]) -> String? {
                ((line["result"] as? [String: Any])?["inference_results"] as? [String: Any]).flatMap {
                    ($0["classification"] as? [[String: Any]])?.first?["display_name"] as? String
                }
            }
            #expect(top(lines[0]) == "espresso" && top(lines[1]) == "bald eagle")
            #expect(lines[0]["input_prefix"] as? String == "data:image/png;base64,")
            #expect((lines[0]["input_length"] as? Int ?? 0) > 10_000)
            let failed = try #require(lines[2]["result"] as? [String: Any])
            #expect(failed["error"] as? Bool == true)
            #expect((failed["error_description"] as? String)?.contains("not an image NetRunner decodes") == true)
            #expect((lines[3]["unknown_model"] as? String)?.hasPrefix("No model \"nope\" here") == true, "\(lines[3])")
            #expect(lines[3]["closed"] as? Bool == true)

            let page = try await server.request("/")
            #expect(page.status == 200 && page.headers["content-type"]?.hasPrefix("text/html") == true)
            let html = String(decoding: page.body, as: UTF8.self)
            #expect(html.contains("<script src=\"/app.js\">") && html.contains("/app.css"))
            let script = try await server.request("/app.js")
            #expect(script.status == 200 && script.headers["content-type"]?.hasPrefix("text/javascript") == true)
            let javascript = String(decoding: script.body, as: UTF8.self)
            #expect(javascript.contains("getUserMedia") && javascript.contains("/v1/live"))
            for text in [html, javascript, String(decoding: try await server.request("/app.css").body, as: UTF8.self)] {
                #expect(!text.contains("http://") && !text.contains("https://"), "nothing fetched from elsewhere")
            }
        }
    }

    @Test("The web app works in a real browser with a camera: labels, boxes, latency, pause, a picked photo")
    func browser() async throws {
        _ = try BrowserPage.python()
        // A site to import a model from (the float32 MobileNetV2 bundle, zipped), an empty models
        // folder to import it into, and an album of the committed photos.
        let folder = try TemporaryFolder(prefix: "netrunner-browser")
        defer { folder.remove() }
        try FileManager.default.createDirectory(atPath: folder.path("site"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder.path("Models"), withIntermediateDirectories: true)
        try ZipFixture.writeFloatBundle(to: folder.path("site/float.tiobundle.zip"))
        // The album: the committed photos and one that cannot be decoded.
        let album = folder.path("album")
        try FileManager.default.copyItem(atPath: Fixtures.path("Tests/Fixtures/Photos/test"), toPath: album)
        try Data("not a JPEG".utf8).write(to: URL(fileURLWithPath: album + "/broken.jpg"))
        let site = try FileServer(folder: folder.path("site"))
        defer { site.stop() }
        let clip = try VideoClips.faces(in: folder.url.path, seconds: 2)
        // Screenshots go to the repository's git-ignored out/ folder, where CI keeps them.
        let shots = Fixtures.path("out/browser")
        // In process (the check kills nothing), stopped cleanly after it.
        let checked = try await LiveServer.serve(
            [
                "--threads", "2", "--albums", album, "--stream",
                "portraits=" + clip,
                "--stream-interval", "100",
                // The site to import from is on loopback.
                "--allow-private-imports",
            ],
            models: folder.path("Models")
        ) { server in
            try await BrowserPage.check(
                "tools/serve/browser_check.py", [server.address, shots, site.url("float.tiobundle.zip"), "5"])
        }
        let (report, line) = (checked.json, checked.line)
        let labels = report["classifier_labels"] as? [String] ?? []
        // The fake camera shows the espresso, then the eagle: the page names each in turn.
        #expect(labels.contains("espresso") && labels.contains("bald eagle"), "\(labels)")
        #expect((labels.firstIndex(of: "espresso") ?? 99) < (labels.firstIndex(of: "bald eagle") ?? -1), "\(line)")
        #expect((report["frames"] as? Int ?? 0) >= 5, "frames answered: \(report["frames"] ?? "")")
        #expect(report["frames_while_paused"] as? Int == 0, "\(line)")
        #expect((report["inference"] as? String)?.hasSuffix(" ms") == true, "\(line)")
        #expect(report["seen_src"] as? String == "data:image/png;base64,", "\(line)")
        #expect(report["detector_faces"] as? Int == 2, "the two portraits: \(report["detector_faces"] ?? "")")
        #expect((report["answers_after_switch"] as? [String])?.isEmpty == true, "another model's answers: \(line)")
        #expect((report["photo_labels"] as? [String])?.first == "bald eagle", "\(line)")
        // The picked photo's input as the model saw it (224 pixels wide), the camera off said as
        // such, the model's details as named rows.
        #expect(report["photo_seen_width"] as? Int == 224, "\(line)")
        #expect((report["status_camera_off"] as? String)?.hasSuffix("camera off") == true, "\(line)")
        let rows = Dictionary(
            ((report["details_rows"] as? [[String]]) ?? []).compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil },
            uniquingKeysWith: { first, _ in first })
        #expect(rows["Task"] == "classification" && rows["Labels"] == "1000", "\(line)")
        #expect(rows["Input size"]?.hasPrefix("224 x 224") == true, "\(line)")
        // Settings: the model imported by URL, picked, and answering a dropped photo.
        #expect((report["import_status"] as? String)?.hasPrefix("Imported MobileNet V2") == true, "\(report)")
        #expect(report["model_after_import"] as? String == "mobilenet-v2-1.0-224-float32", "\(line)")
        #expect((report["imported_photo_labels"] as? [String])?.first == "bald eagle", "\(line)")
        #expect(FileManager.default.fileExists(atPath: folder.path("Models/float.tiobundle/model.json")), "\(line)")
        // The album: every photo in the grid with its answer, one opened.
        // With the run's latency: the 4 photos answered (the failed one has none).
        let albumStatus = report["album_status"] as? String ?? ""
        #expect(
            albumStatus.hasPrefix("mobilenet-v2-1.0-224-float32: 5 of 5 photos, 1 failed; inference ")
                && albumStatus.contains(" ms mean, p90 "), "\(report)")
        let captions = report["album_captions"] as? [String] ?? []
        #expect(captions.count == 5 && captions.contains { $0.hasPrefix("Egyptian cat") }, "\(captions)")
        #expect(captions.contains("failed") && report["album_no_preview"] as? [String] == ["no preview"], "\(line)")
        #expect(
            captions.contains { $0.hasPrefix("espresso") } && captions.contains { $0.hasPrefix("bald eagle") },
            "\(line)")
        #expect(report["album_thumbnails_loaded"] as? Int == 4, "\(line)")
        #expect(
            (report["album_names"] as? [String])?.sorted()
                == ["broken.jpg", "chelsea.png", "coffee.jpg", "eagle.jpg", "grace_hopper.jpg"], "\(line)")
        let opened = report["album_name_shown"] as? String ?? ""
        #expect(opened.hasSuffix(".jpg") || opened.hasSuffix(".png"), "the name as written: \(line)")
        #expect((report["album_opened_labels"] as? [String])?.isEmpty == false, "\(line)")
        // Streams: the clip the server reads, previewed with its two faces, frame after frame.
        #expect(report["streams_tab_shown"] as? Bool == true, "\(line)")
        #expect(report["stream_faces"] as? Int == 2, "\(report)")
        #expect(report["stream_frame_width"] as? Int == 640, "\(line)")
        #expect(report["stream_advances"] as? Bool == true, "\(report["stream_name"] ?? "")")
        #expect((report["console_errors"] as? [String]) == [], "\(report["console_errors"] ?? "")")
        for name in [
            "camera-classifier-1.png", "camera-detector.png", "photo.png", "settings-import.png", "album-grid.png",
            "album-opened.png", "streams.png",
        ] {
            #expect(FileManager.default.fileExists(atPath: shots + "/" + name), "\(name)")
        }
    }

    @Test("Imports: bad bodies are 400, a failing import says why, an import is served at once; --no-import is 403")
    func imports() async throws {
        let folder = try TemporaryFolder(prefix: "netrunner-serve-import")
        defer { folder.remove() }
        try FileManager.default.createDirectory(atPath: folder.path("site"), withIntermediateDirectories: true)
        try Fixtures.data("Models/mobilenet_v2_1.0_224_uint8_metadata.tflite")
            .write(to: URL(fileURLWithPath: folder.path("site/flowers.tflite")))
        let site = try FileServer(folder: folder.path("site"))
        defer { site.stop() }
        try await LiveServer.serve(["--threads", "1", "--allow-private-imports"], models: folder.path("Models")) {
            server in

            let json = "application/json"
            let broken = try await server.request(
                "/v1/imports", method: "POST", body: Data("{\"url\": ".utf8), contentType: json)
            #expect(broken.status == 400)
            #expect(
                (broken.json["error_description"] as? String)?.contains("line 1, column 9") == true, "\(broken.json)")
            let local = try await server.request(
                "/v1/imports", method: "POST", body: Data(#"{"url": "/etc/passwd"}"#.utf8), contentType: json)
            #expect(local.status == 400)
            #expect((local.json["error_description"] as? String)?.hasPrefix("Only http:// and https:// URLs") == true)

            func follow(_ url: String) async throws -> [String: Any] {
                let started = try await server.request(
                    "/v1/imports", method: "POST", body: Data(#"{"url": "\#(url)"}"#.utf8), contentType: json)
                #expect(started.status == 202)
                let id = try #require(started.json["id"] as? String)
                #expect(started.headers["location"] == "/v1/imports/\(id)")
                var job: [String: Any] = [:]
                try await Eventually.wait(for: "the import of \(url) finished", upTo: .seconds(60)) {
                    job = try await server.request("/v1/imports/\(id)").json
                    return job["state"] as? String == "installed" || job["state"] as? String == "failed"
                }
                return job
            }
            let missing = try await follow(site.url("nothing.zip"))
            #expect(missing["state"] as? String == "failed")
            #expect((missing["error"] as? String)?.contains("the server answered 404") == true, "\(missing)")

            let done = try await follow(site.url("flowers.tflite"))
            #expect(done["state"] as? String == "installed", "\(done)")
            #expect((done["model"] as? [String: Any])?["state"] as? String == "ready")
            #expect(done["received_bytes"] as? Int == done["total_bytes"] as? Int)
            let answer = try await server.request(
                "/v1/models/flowers/classify", method: "POST",
                body: try Data(contentsOf: URL(fileURLWithPath: Self.coffee)),
                contentType: "image/jpeg")
            #expect(answer.status == 200)
            let results = answer.json["inference_results"] as? [String: Any]
            #expect(((results?["classification"] as? [[String: Any]])?.first?["display_name"] as? String) == "espresso")
            // The same id again: the job fails, naming it; the models folder keeps one copy.
            let twice = try await follow(site.url("flowers.tflite"))
            #expect((twice["error"] as? String)?.contains("\"flowers\" is already") == true, "\(twice)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path("Models")) == ["flowers.tflite"])
        }

        try await LiveServer.serve(["--threads", "1"]) { closed in
            let refused = try await closed.request(
                "/v1/imports", method: "POST", body: Data(#"{"url": "http://127.0.0.1:1/x.zip"}"#.utf8),
                contentType: "application/json")
            #expect(refused.status == 403)
        }
    }

    @Test(
        "Streams the server reads: the latest answer at the boxes detect finds, the frame drawn, a file looped, keys required"
    )
    func streams() async throws {
        let folder = try TemporaryFolder(prefix: "netrunner-serve-streams")
        defer { folder.remove() }
        let clip = try VideoClips.faces(in: folder.url.path)
        try await LiveServer.serve([
            "--stream", "cam=" + clip, "--stream", folder.path("missing.mp4"), "--stream-interval", "50",
            "--api-key", "k",
        ]) { server in
            let key = ["Authorization": "Bearer k"]
            #expect(try await server.request("/v1/streams").status == 401)
            // The 1-second clip plays at its own rate and loops: wait for the second pass.
            var status: [String: Any] = [:]
            try? await Eventually.wait(for: "the clip's second pass", upTo: .seconds(30)) {
                status = try await server.request("/v1/streams/cam", headers: key).json
                return (status["restarts"] as? Int ?? 0) >= 1 && (status["inferred"] as? Int ?? 0) >= 12
            }
            #expect(status["state"] as? String == "running" || status["state"] as? String == "restarting", "\(status)")
            #expect((status["restarts"] as? Int ?? 0) >= 1 && (status["inferred"] as? Int ?? 0) >= 10, "\(status)")
            #expect(status["model"] as? String == Self.detector)
            let line = try #require(status["result"] as? [String: Any])
            let still = try await cliLine("face_detection_short_range.tiobundle", Self.portraits)
            let found = (results(line)["detection"] as? [[String: Any]] ?? []).compactMap { $0["box"] as? [Double] }
            let expected = (results(still)["detection"] as? [[String: Any]] ?? []).compactMap { $0["box"] as? [Double] }
            #expect(found.count == 2 && expected.count == 2)
            for box in expected {
                let best = found.map { StreamCommandTests().iou(box, $0) }.max() ?? 0
                #expect(best >= 0.9, "IoU \(best)")
            }
            let frame = try await server.request("/v1/streams/cam/frame.jpg", headers: key)
            #expect(frame.status == 200 && frame.headers["content-type"] == "image/jpeg")
            #expect(frame.body.prefix(2) == Data([0xFF, 0xD8]))
            // A source that cannot be read: named, failing, retried; the server goes on.
            let broken = try await server.request("/v1/streams/stream2", headers: key).json
            #expect(broken["state"] as? String == "failed", "\(broken)")
            #expect((broken["problem"] as? String)?.contains("missing.mp4: no such file") == true, "\(broken)")
            let list = try await server.request("/v1/streams", headers: key).json
            #expect((list["streams"] as? [[String: Any]])?.count == 2)
            #expect(try await server.request("/v1/streams/nope", headers: key).status == 404)
            #expect(try await server.request("/v1/streams/stream2/frame.jpg", headers: key).status == 404)
            // Prometheus: each stream's frames by outcome (counters, never going down), restarts, up.
            func metric(_ name: String, _ labels: String) async throws -> Double? {
                let text = String(decoding: try await server.request("/metrics").body, as: UTF8.self)
                let prefix = name + "{" + labels + "} "
                return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap {
                    Double($0.dropFirst(prefix.count))
                }
            }
            let inferred = try #require(
                try await metric("netrunner_stream_frames_total", #"stream="cam",outcome="inferred""#))
            #expect(inferred >= Double(status["inferred"] as? Int ?? .max))
            let received = try #require(
                try await metric("netrunner_stream_frames_total", #"stream="cam",outcome="received""#))
            #expect(received >= inferred)
            #expect(try await metric("netrunner_stream_restarts_total", #"stream="cam""#) ?? 0 >= 1)
            #expect(try await metric("netrunner_stream_up", #"stream="stream2""#) == 0)
            #expect(try await metric("netrunner_stream_restarts_total", #"stream="stream2""#) != nil)
            // Read again once the stream has gone on (a counter never goes down).
            var later: Double?
            try await Eventually.wait(for: "more frames inferred", upTo: .seconds(30)) {
                later = try await metric("netrunner_stream_frames_total", #"stream="cam",outcome="inferred""#)
                return (later ?? 0) > inferred
            }
            #expect(try #require(later) >= inferred)
        }
    }
}
