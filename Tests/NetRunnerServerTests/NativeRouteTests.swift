import Foundation
import NetRunner
import NetRunnerJobs
import NetRunnerTestSupport
import Synchronization
import Testing

@testable import NetRunnerServer

/// The native API's refusals, its access rules and albums on the composed server in process (issue 34:
/// they spawned a server each; `netrunnerTests`' `ServeCommandTests` keeps what needs a real
/// socket or the real CLI).
@Suite("Native API in process")
struct NativeRouteTests {
    static let classifier = "mobilenet-v2-1.0-224-uint8"
    static let detector = "face-detection-short-range"
    static let coffee = Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")
    static let portraits = Fixtures.path("Tests/Fixtures/Photos/faces/two_portraits.jpg")

    /// The results line `netrunner bulk` prints for a photo, from the bulk job run in process
    /// (every pixel decoded, as the server does): the reference the server must equal (the bulk
    /// lines are compared with Python's in the task tests).
    static func bulkLine(_ model: String, _ photo: String) throws -> [String: Any] {
        let loaded = try LoadedModel(.path(Fixtures.path("Models/bundles/\(model)")))
        let job = try BulkJob(BulkSettings(roots: [photo], files: [photo], model: loaded))
        let lines = Mutex<[String]>([])
        let tally = try job.run(deliver: { record in
            lines.withLock { $0.append(BulkResultsFile.Format.jsonLines.line(for: record)) }
        })
        #expect(tally.count == 1 && tally.failed == 0)
        let line = try #require(lines.withLock { $0.first })
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    static func results(_ line: [String: Any]) -> NSDictionary {
        (line["inference_results"] as? [String: Any] ?? [:]) as NSDictionary
    }

    @Test("Bad requests get the right status and a message to act on, never a 500")
    func errors() async throws {
        try await ServerSession.with(configuration: .init(maximumUploadBytes: 100_000)) { server in
            let photo = try Data(contentsOf: URL(fileURLWithPath: Self.coffee))  // 80 KB
            let big = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("Tests/Fixtures/Photos/test/eagle.jpg")))
            let cases: [(String, Data?, String?, Int, String)] = [
                ("/v1/models/nope/classify", photo, "image/jpeg", 404, "No model \"nope\" here"),
                (
                    "/v1/models/\(Self.classifier)/classify", Data("hello".utf8), "text/plain", 415,
                    "Content-Type text/plain"
                ),
                (
                    "/v1/models/\(Self.classifier)/classify", big, "image/jpeg", 413,
                    "larger than the limit of 100000 bytes"
                ),
                (
                    "/v1/models/\(Self.classifier)/classify", Data("%PDF-1.7..".utf8), "image/jpeg", 400,
                    "it looks like a PDF document"
                ),
                ("/v1/models/\(Self.classifier)/classify", Data(), "image/jpeg", 400, "The body is empty"),
                ("/v1/models/\(Self.classifier)/classify", photo.prefix(5000), "image/jpeg", 400, "truncated"),
                ("/v1/models/\(Self.classifier)/classify?maxResults=0", photo, "image/jpeg", 400, "maxResults must be"),
                (
                    "/v1/models/\(Self.classifier)/classify?preview=yes", photo, "image/jpeg", 400,
                    "preview must be 1 or 0"
                ),
                (
                    "/v1/models/\(Self.classifier)/classify?top=3", photo, "image/jpeg", 400,
                    "Unknown query parameter \"top\""
                ),
                // Issue 54, finding 11 (a): a repeated parameter is refused, not one of them picked.
                (
                    "/v1/models/\(Self.classifier)/classify?mask=image&mask=model", photo, "image/jpeg", 400,
                    "mask is given 2 times"
                ),
                (
                    "/v1/models/\(Self.classifier)/classify?scoreThreshold=0.1&scoreThreshold=0.9", photo,
                    "image/jpeg", 400, "scoreThreshold is given 2 times"
                ),
                (
                    "/v1/models/\(Self.classifier)/classify?preview=1&preview=0", photo, "image/jpeg", 400,
                    "preview is given 2 times"
                ),
                (
                    "/v1/models/\(Self.classifier)/classify?categoryAllowlist=tabby%20kat", photo, "image/jpeg", 400,
                    "closest: \"tabby\""
                ),
                (
                    "/v1/models/\(Self.detector)/classify", photo, "image/jpeg", 404,
                    "POST to /v1/models/\(Self.detector)/detect"
                ),
            ]
            for (path, body, type, status, message) in cases {
                let reply = try await server.request(path, method: "POST", body: body, contentType: type)
                let text = reply.json["error_description"] as? String ?? String(decoding: reply.body, as: UTF8.self)
                #expect(reply.status == status, "\(path): \(text)")
                #expect(text.contains(message), "\(path): \(text)")
                #expect(reply.json["error"] as? Bool == true)
            }
            let unknown = try await server.request("/v2/models/nope")
            #expect(unknown.status == 404)
            #expect((unknown.json["error"] as? String)?.contains("No model \"nope\"") == true)
        }
    }

    @Test("API keys guard what runs models; CORS answers only the origins allowed")
    func access() async throws {
        try await ServerSession.with(
            configuration: .init(apiKeys: ["s3cret"], allowedOrigins: ["https://app.example"])
        ) { server in
            let photo = try Data(contentsOf: URL(fileURLWithPath: Self.coffee))
            let path = "/v1/models/\(Self.classifier)/classify"
            let anonymous = try await server.request(path, method: "POST", body: photo, contentType: "image/jpeg")
            #expect(anonymous.status == 401)
            #expect(anonymous.headers["www-authenticate"] == "Bearer")
            #expect((anonymous.json["error_description"] as? String)?.contains("needs an API key") == true)
            let wrong = try await server.request(
                path, method: "POST", body: photo, contentType: "image/jpeg", headers: ["Authorization": "Bearer nope"])
            #expect(wrong.status == 401)
            let keyed = try await server.request(
                path, method: "POST", body: photo, contentType: "image/jpeg",
                headers: ["Authorization": "Bearer s3cret"])
            #expect(keyed.status == 200)
            #expect(try await server.request("/v1/models").status == 200, "listing needs no key")
            #expect(try await server.request("/v2/health/ready").status == 200, "probes need no key")
            let preflight = try await server.request(
                path, method: "OPTIONS",
                headers: ["Origin": "https://app.example", "Access-Control-Request-Method": "POST"])
            #expect(preflight.status == 204)
            #expect(preflight.headers["access-control-allow-origin"] == "https://app.example")
            #expect(preflight.headers["access-control-allow-headers"]?.contains("Authorization") == true)
            let foreign = try await server.request("/v1/models", headers: ["Origin": "https://evil.example"])
            #expect(foreign.headers["access-control-allow-origin"] == nil)
            let friendly = try await server.request("/v1/models", headers: ["Origin": "https://app.example"])
            #expect(friendly.headers["access-control-allow-origin"] == "https://app.example")
        }
    }

    @Test("Albums: listed, run through a model with the answers classify gives, images and thumbnails by index only")
    func albums() async throws {
        let album = Fixtures.path("Tests/Fixtures/Photos/test")
        try await ServerSession.with(threads: 2, configuration: .init(albums: [album])) { server in
            let list = try await server.request("/v1/albums").json
            let albums = try #require(list["albums"] as? [[String: Any]])
            #expect(albums.count == 1 && albums[0]["id"] as? String == "test" && albums[0]["images"] as? Int == 4)
            let contents = try await server.request("/v1/albums/test").json
            let files = (contents["images"] as? [[String: Any]] ?? []).compactMap { $0["file"] as? String }
            #expect(files == ["chelsea.png", "coffee.jpg", "eagle.jpg", "grace_hopper.jpg"])

            #expect(try await server.request("/v1/albums/nope").status == 404)
            #expect(try await server.request("/v1/albums/test/runs", method: "POST").status == 400)
            #expect(try await server.request("/v1/albums/test/runs?model=nope", method: "POST").status == 404)
            let started = try await server.request("/v1/albums/test/runs?model=\(Self.classifier)", method: "POST")
            #expect(started.status == 202)
            let id = try #require(started.json["id"] as? String)
            var report: [String: Any] = [:]
            try await Eventually.wait(for: "the album run finished", every: .milliseconds(100)) {
                report = try await server.request("/v1/runs/\(id)").json
                return report["state"] as? String == "finished"
            }
            #expect(report["done"] as? Int == 4 && report["failed"] as? Int == 0, "\(report)")
            let lines = report["results"] as? [[String: Any]] ?? []
            // The latency summary is the lines' own, as bulk and evaluate summarise theirs.
            let latency = try #require(report["latency"] as? [String: [String: Any]], "\(report)")
            let inference = lines.compactMap { ($0["result"] as? [String: Any])?["inference_latency"] as? Double }
            #expect(latency["inference"]?["count"] as? Int == 4 && inference.count == 4, "\(latency)")
            let mean = inference.reduce(0, +) / Double(max(1, inference.count))
            #expect(abs((latency["inference"]?["mean"] as? Double ?? -1) - mean) < 0.01, "\(latency) vs \(inference)")
            #expect(Set(latency.keys) == ["decode", "preprocess", "inference", "total"])
            // Each answer is the one `classify --json` prints for the same photo.
            for line in lines {
                let result = try #require(line["result"] as? [String: Any])
                let file = try #require(result["image"] as? String)
                let cli = try ProcessResult.run(Fixtures.netrunner, ["classify", "--json", album + "/" + file])
                let expected = try #require(
                    try JSONSerialization.jsonObject(with: Data(cli.stdout.utf8)) as? [String: Any])
                let top = { (line: [String: Any]) in
                    ((line["inference_results"] as? [String: Any])?["classification"] as? [[String: Any]])?
                        .map { "\($0["display_name"] ?? "") \($0["score"] ?? "")" }
                }
                #expect(top(result) == top(expected), "\(file)")
            }
            let thumbnail = try await server.request("/v1/albums/test/images/2?thumbnail=1")
            #expect(thumbnail.status == 200 && thumbnail.headers["content-type"] == "image/jpeg")
            #expect(thumbnail.body.starts(with: [0xFF, 0xD8, 0xFF]))
            let original = try await server.request("/v1/albums/test/images/0")
            #expect(original.body == (try Data(contentsOf: URL(fileURLWithPath: album + "/chelsea.png"))))
            #expect(original.headers["content-type"] == "image/png")
            for bad in ["4", "-1", "..%2F..%2Fetc%2Fpasswd", "1e3"] {
                #expect(try await server.request("/v1/albums/test/images/\(bad)").status == 404, "\(bad)")
            }
        }
    }

    @Test("The native API answers as the CLI does: raw uploads, browser forms, boxes in pixels, timings")
    func nativeAPI() async throws {
        try await ServerSession.with(threads: 2) { server in
            let photo = try Data(contentsOf: URL(fileURLWithPath: Self.coffee))
            let classified = try Self.bulkLine("mobilenet_v2_1.0_224_uint8.tiobundle", Self.coffee)
            let top = (Self.results(classified)["classification"] as? [[String: Any]])?.first
            #expect(top?["display_name"] as? String == "espresso", "\(classified)")
            // curl --data-binary sends application/x-www-form-urlencoded unless told otherwise.
            for type in ["image/jpeg", "application/octet-stream", "application/x-www-form-urlencoded"] {
                let reply = try await server.request(
                    "/v1/models/\(Self.classifier)/classify", method: "POST", body: photo, contentType: type)
                #expect(reply.status == 200, "\(type): \(String(decoding: reply.body, as: UTF8.self))")
                #expect(Self.results(reply.json) == Self.results(classified))
                #expect(reply.json["model"] as? String == Self.classifier)
                #expect(reply.headers["server-timing"]?.contains("inference;dur=") == true)
            }
            // A browser form: the file part, its name kept.
            let boundary = "netrunner-test-boundary"
            var form = Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhello\r\n".utf8)
            form += Data(
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"image\"; filename=\"coffee.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n"
                    .utf8)
            form += photo + Data("\r\n--\(boundary)--\r\n".utf8)
            let posted = try await server.request(
                "/v1/models/\(Self.classifier)/classify?maxResults=2", method: "POST", body: form,
                contentType: "multipart/form-data; boundary=\(boundary)")
            #expect(posted.status == 200)
            #expect(posted.json["image"] as? String == "coffee.jpg")
            let categories = (posted.json["inference_results"] as? [String: Any])?["classification"] as? [[String: Any]]
            #expect(categories?.map { $0["display_name"] as? String } == ["espresso", "consomme"])

            let faces = try await server.request(
                "/v1/models/\(Self.detector)/detect", method: "POST",
                body: try Data(contentsOf: URL(fileURLWithPath: Self.portraits)), contentType: "image/jpeg")
            #expect(faces.status == 200)
            let cli = try Self.bulkLine("face_detection_short_range.tiobundle", Self.portraits)
            #expect(faces.json["image_width"] as? Int == 640 && faces.json["image_height"] as? Int == 400)
            let served = (faces.json["inference_results"] as? [String: Any])?["detection"] as? [[String: Any]] ?? []
            let expected = (cli["inference_results"] as? [String: Any])?["detection"] as? [[String: Any]] ?? []
            #expect(served.count == 2 && expected.count == 2)
            for (found, wanted) in zip(served, expected) {
                let a = found["box"] as? [Double] ?? []
                let b = wanted["box"] as? [Double] ?? []
                #expect(a.count == 4 && zip(a, b).allSatisfy { abs($0 - $1) < 1e-3 }, "\(a) vs \(b)")
            }

            // Any described model, TensorIO's way: every output by its layer name.
            let outputs = try await server.request(
                "/v1/models/mobilenet-v2-1.0-224-float32/run", method: "POST", body: photo, contentType: "image/jpeg")
            #expect(outputs.status == 200, "\(String(decoding: outputs.body, as: UTF8.self).prefix(300))")
            let labelled = (outputs.json["outputs"] as? [String: Any])?.values.first as? [String: Double] ?? [:]
            #expect(labelled.max { $0.value < $1.value }?.key == "espresso", "\(labelled.count) labels")

            let list = try await server.request("/v1/models")
            let models = list.json["models"] as? [[String: Any]] ?? []
            // (Which model `serve` lists first is its catalog's, built by the command line: the
            // spawned ServeCommandTests check it.)
            #expect(models.contains { $0["id"] as? String == Self.classifier })
            #expect(models.allSatisfy { $0["state"] as? String == "ready" }, "\(models.map { $0["state"] ?? "" })")
            // Prometheus metrics: requests by route and status, stage latency by model, the queue.
            let metrics = String(decoding: try await server.request("/metrics").body, as: UTF8.self)
            #expect(
                metrics.contains(#"netrunner_http_requests_total{route="/v1/models/{id}/classify",status="200"} 4"#),
                "\(metrics.prefix(800))")
            #expect(
                metrics.contains(
                    #"netrunner_stage_duration_seconds_count{model="mobilenet-v2-1.0-224-uint8",stage="inference"} 4"#))
            #expect(metrics.contains("netrunner_queue_depth_requests 0"))
            #expect(metrics.contains("netrunner_models_ready_count "))
            let one = try await server.request("/v1/models/\(Self.detector)")
            #expect(one.json["task"] as? String == "detection")
            #expect((one.json["preprocessing"] as? [String: Any])?["crop"] as? String == "letterbox")
        }
    }
}
