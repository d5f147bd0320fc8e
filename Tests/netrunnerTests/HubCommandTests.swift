import Foundation
import NetRunnerTestSupport
import Testing

/// `netrunner hub`: the hub and its client as people and programs use them, with real models
/// and real processes; the failures of real networks and machines (a pull or the hub killed,
/// pulls at once) are `Crashes` (HubCommandTests+Crashes.swift), run serially with these. The
/// hubs the tests start are `Setup` and `ProcessSetup` (HubCommandTests+Setup.swift).
@Suite("netrunner hub", .serialized)
struct HubCommandTests {
    static let bundleZip = "Tests/Fixtures/Bundles/multi_io.tiobundle.zip"
    static let tflite = "Models/mobilenet_v2_1.0_224_uint8_metadata.tflite"
    static let coffee = Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")

    @Test("Publish, list, alias with history, roll back, pull, and run a hub: model, as the README shows")
    func workflow() async throws {
        try await Setup.with { setup in
            let first = try await setup.netrunner([
                "hub", "push", Fixtures.path(Self.tflite), "--name", "mobilenet", "--alias", "production",
            ])
            #expect(first.status == 0, "\(first.stderr)")
            #expect(
                first.stdout.hasPrefix("published mobilenet@1 (sha256 f3594f132b91, 4059384 bytes, classification)"))
            #expect(first.stdout.contains("; production -> 1"))
            let second = try await setup.netrunner(["hub", "push", try setup.floatBundleZip(), "--name", "mobilenet"])
            #expect(second.stdout.hasPrefix("published mobilenet@2"), "\(second.stderr)")

            // The description is that of the version production serves, not the newest's (issue 53).
            let list = try await setup.netrunner(["hub", "list"], token: nil)
            #expect(
                list.stdout.hasPrefix(
                    "mobilenet  latest 2  MobileNetV2 1.0 224 ImageNet (uint8 quantized)  [production -> 1]"),
                "\(list)")
            #expect(
                try await setup.netrunner(["hub", "list", "nothing-like-this"], token: nil).stdout.hasPrefix(
                    "no models"))

            #expect(
                try await setup.netrunner(["hub", "alias", "mobilenet", "production", "2"]).stdout
                    == "mobilenet: production -> 2\n")
            let rolled = try await setup.netrunner(["hub", "rollback", "mobilenet", "production"])
            #expect(rolled.stdout == "mobilenet: production -> 1 (rolled back)\n", "\(rolled)")
            let history = try await setup.netrunner(["hub", "history", "mobilenet", "production"], token: nil).stdout
                .split(separator: "\n")
            #expect(history.count == 3)
            #expect(history.first?.hasSuffix("admin  set  (new) -> 1") == true, "\(history)")
            #expect(history.last?.hasSuffix("admin  rollback  2 -> 1") == true, "\(history)")

            // hub: wherever --model goes; the answer is the same as the file's own.
            let viaHub = try await setup.netrunner(
                ["classify", "--model", "hub:mobilenet@production", Self.coffee], token: nil)
            let direct = try await OffPool.run {
                try ProcessResult.run(
                    Fixtures.netrunner, ["classify", "--model", Fixtures.path(Self.tflite), Self.coffee])
            }
            #expect(viaHub.status == 0, "\(viaHub.stderr)")
            let answers = { (text: String) in text.split(separator: "\n").dropFirst().map(String.init) }
            #expect(answers(viaHub.stdout) == answers(direct.stdout) && !answers(direct.stdout).isEmpty)
            #expect(viaHub.stderr.contains("note: hub:mobilenet@production is version 1 (sha256 f3594f132b91)"))
            let pulled = try await setup.netrunner(["hub", "pull", "mobilenet@2"], token: nil)
            #expect(pulled.status == 0 && pulled.stdout.contains("mobilenet@2 sha256 "), "\(pulled)")

            // The hub stopped: the verified copy still runs (prefer offline).
            await setup.hub.stop()
            let offline = try await setup.netrunner(
                ["classify", "--model", "hub:mobilenet@production", Self.coffee], token: nil)
            #expect(offline.status == 0 && answers(offline.stdout) == answers(direct.stdout), "\(offline.stderr)")
            // Said once, as ML Kit's fallback is explicit: the hub is down, and which cached version runs.
            #expect(
                offline.stderr.components(separatedBy: "cannot be reached").count == 2
                    && offline.stderr.contains(
                        "using the cached hub:mobilenet@production, version 1 (sha256 f3594f132b91)"),
                "\(offline.stderr)")
            let never = try await setup.netrunner(["classify", "--model", "hub:other", Self.coffee], token: nil)
            #expect(never.status == 1)
            #expect(
                never.stderr.contains("other@latest is not downloaded, and the hub at http://127.0.0.1:")
                    && never.stderr.contains("cannot be reached"),
                "\(never.stderr)")
        }
    }

    @Test("The same bytes published as a new version: the note names the version the reference names now")
    func sameBytesNote() async throws {
        try await Setup.with { setup in
            let file = Fixtures.path(Self.tflite)
            #expect(
                try await setup.netrunner(["hub", "push", file, "--name", "m", "--alias", "production"]).status == 0)
            let first = try await setup.netrunner(["classify", "--model", "hub:m@production", Self.coffee], token: nil)
            #expect(
                first.stderr.contains("note: hub:m@production is version 1 (sha256 f3594f132b91)"), "\(first.stderr)")
            let again = try await setup.netrunner(["hub", "push", file, "--name", "m", "--alias", "production"])
            #expect(again.stdout.hasPrefix("published m@2 (sha256 f3594f132b91"), "\(again)")
            for reference in ["m@production", "m"] {
                let second = try await setup.netrunner(
                    ["classify", "--model", "hub:" + reference, Self.coffee], token: nil)
                #expect(second.status == 0, "\(second.stderr)")
                #expect(
                    second.stderr.contains("note: hub:\(reference) is version 2 (sha256 f3594f132b91)"),
                    "\(second.stderr)")
            }
            let pulled = try await setup.netrunner(["hub", "pull", "m@production"], token: nil)
            #expect(pulled.stdout.hasPrefix("m@2 sha256 f3594f132b91"), "\(pulled)")
        }
    }

    @Test("A rollout whose percents do not add up to 100 is refused with their sum, before the hub is asked")
    func rolloutSum() throws {
        // No hub listens at this address: the refusal comes first.
        let environment: [String: String?] = ["NETRUNNER_HUB": "http://127.0.0.1:9", "NETRUNNER_HUB_TOKEN": nil]
        let over = try ProcessResult.run(
            Fixtures.netrunner, ["hub", "alias", "flowers", "production", "1:90", "2:20"], environment: environment)
        #expect(over.status == 64, "\(over)")
        #expect(
            over.stderr.contains(
                "The percents of a rollout must add up to 100; 1:90 2:20 add up to 110 (90 + 20). For example: 7:90 8:10."
            ),
            "\(over.stderr)")
        #expect(!over.stderr.contains("a term of"), "\(over.stderr)")
        let under = try ProcessResult.run(
            Fixtures.netrunner, ["hub", "alias", "flowers", "production", "1:50", "2:40"], environment: environment)
        #expect(under.status == 64 && under.stderr.contains("1:50 2:40 add up to 90 (50 + 40)"), "\(under.stderr)")
    }

    @Test("Resolve is the update check (strong ETag, 304); blobs resume with Range and If-Range (206, 416)")
    func resolveAndRanges() async throws {
        try await Setup.with { setup in
            let hub = setup.hub
            let data = try Fixtures.data(Self.tflite)
            let pushed = try await hub.hubRequest("/v1/models/m/versions?alias=production", method: "POST", body: data)
            #expect(pushed.status == 201)
            let resolved = try await hub.hubRequest("/v1/models/m/resolve?ref=production", key: nil)
            let digest = "f3594f132b91cffd0b45c85f33056564e98c4125c107ea964de7d5accf1dacae"
            #expect(resolved.status == 200 && resolved.headers["etag"] == "\"sha256:\(digest)\"")
            let json = try JSONSerialization.jsonObject(with: resolved.body) as? [String: Any]
            #expect(json?["download"] as? String == "/v1/blobs/sha256:\(digest)" && json?["version"] as? Int == 1)
            let unchanged = try await hub.hubRequest(
                "/v1/models/m/resolve?ref=production", headers: ["If-None-Match": "\"sha256:\(digest)\""], key: nil)
            #expect(unchanged.status == 304)
            let whole = try await hub.hubRequest("/v1/blobs/sha256:\(digest)", key: nil)
            #expect(whole.status == 200 && whole.body == data && whole.headers["content-length"] == "\(data.count)")
            let tail = try await hub.hubRequest(
                "/v1/blobs/sha256:\(digest)",
                headers: ["Range": "bytes=4000000-", "If-Range": "\"sha256:\(digest)\""], key: nil)
            #expect(tail.status == 206 && tail.body == data.suffix(from: 4_000_000))
            #expect(tail.headers["content-range"] == "bytes 4000000-\(data.count - 1)/\(data.count)")
            let stale = try await hub.hubRequest(
                "/v1/blobs/sha256:\(digest)", headers: ["Range": "bytes=4000000-", "If-Range": "\"sha256:0\""],
                key: nil)
            #expect(stale.status == 200 && stale.body.count == data.count, "a changed file is sent whole")
            let beyond = try await hub.hubRequest(
                "/v1/blobs/sha256:\(digest)", headers: ["Range": "bytes=99999999-"], key: nil)
            #expect(beyond.status == 416)
            #expect(
                try await hub.hubRequest("/v1/blobs/sha256:\(String(repeating: "0", count: 64))", key: nil).status
                    == 404)
            #expect(try await hub.hubRequest("/v1/models/m/resolve?ref=9", key: nil).status == 404)
        }
    }

    @Test("Keys: 401 without one, 403 with too small a scope, private reads; only digests are stored")
    func keys() async throws {
        try await Setup.with(["--private"]) { setup in
            let hub = setup.hub
            let data = try Fixtures.data(Self.tflite)
            #expect(
                try await hub.hubRequest("/v1/models/m/versions", method: "POST", body: data, key: nil).status == 401)
            #expect(try await hub.hubRequest("/v1/models", key: nil).status == 401)
            #expect(try await hub.hubRequest("/v1/models", key: "made-up").status == 401)
            let made = try await setup.netrunner(["hub", "key", "ci-reader", "--scope", "read"])
            let reader = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(made.status == 0 && reader.hasPrefix("nrh_") && reader.count == 68, "\(made)")
            #expect(try await hub.hubRequest("/v1/models", key: reader).status == 200)
            let refused = try await hub.hubRequest("/v1/models/m/versions", method: "POST", body: data, key: reader)
            #expect(refused.status == 403)
            #expect(String(decoding: refused.body, as: UTF8.self).contains("has the read scope; this needs publish"))
            #expect(try await hub.hubRequest("/v1/keys", key: reader).status == 403)
            // Stopped as SIGTERM stops it: the store closed before its files are read.
            await hub.stop()
            let database = try Data(contentsOf: URL(fileURLWithPath: setup.folder.path("data/hub.sqlite")))
            let wal =
                (try? Data(contentsOf: URL(fileURLWithPath: setup.folder.path("data/hub.sqlite-wal")))) ?? Data()
            for key in [reader, HubProcess.adminKey] {
                #expect(database.range(of: Data(key.utf8)) == nil && wal.range(of: Data(key.utf8)) == nil)
            }
        }
    }

    @Test("Hostile uploads and names are refused with reasons, without a trace on disk or in the list")
    func hostile() async throws {
        try await Setup.with(["--max-upload-bytes", "20000000"]) { setup in
            let hub = setup.hub
            let json = Data(#"{"name": "x"}"#.utf8)
            let model = try Fixtures.data(Self.tflite)
            var bomb = [UInt8](ZipFixture.zip([("x.tiobundle/model.json", Data("{}".utf8))]))
            if let central = bomb.indices.first(where: {
                bomb[$0] == 0x50 && bomb[$0 + 1] == 0x4B && bomb[$0 + 2] == 1 && bomb[$0 + 3] == 2
            }) {
                for offset in [20, 24] {
                    bomb.replaceSubrange((central + offset)..<(central + offset + 4), with: [0, 0, 0, 0x80])
                }
            }
            let uploads: [(String, Data, Int, String)] = [
                (
                    "zip-slip", ZipFixture.zip([("x.tiobundle/model.json", json), ("../evil.txt", json)]), 422,
                    "evil.txt"
                ),
                (
                    "symlink", ZipFixture.zip([("x.tiobundle/model.json", json)], attributes: 0o120777 << 16), 422,
                    "link"
                ),
                ("bomb", Data(bomb), 422, "beyond the size limit"),
                ("corrupt", model.prefix(model.count / 3), 422, "not a valid TensorFlow Lite flatbuffer"),
                ("html", Data("<html><body>hi</body></html>".utf8), 422, "HTML page"),
                ("empty", Data(), 400, "The upload is empty"),
                ("too-large", Data(count: 20_000_001), 413, "this hub takes at most 20000000"),
            ]
            for (label, body, status, reason) in uploads {
                let reply = try await hub.hubRequest("/v1/models/x/versions", method: "POST", body: body)
                let text = String(decoding: reply.body, as: UTF8.self)
                #expect(reply.status == status && text.contains(reason), "\(label): \(reply.status) \(text)")
            }
            // A 10 GB Content-Length is refused before a byte is kept.
            let port = String(hub.address.split(separator: ":").last ?? "")
            let huge = try await OffPool.run {
                try ProcessResult.run(
                    "/usr/bin/env",
                    [
                        "python3", "-c",
                        """
                        import socket, sys
                        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
                        s.sendall(b"POST /v1/models/x/versions HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nAuthorization: Bearer \(HubProcess.adminKey)\\r\\nContent-Length: 10000000000\\r\\n\\r\\n" + b"PK" * 1000)
                        print(s.recv(4096).split(b"\\r\\n")[0].decode())
                        """,
                        port,
                    ])
            }
            #expect(huge.stdout.hasPrefix("HTTP/1.1 413"), "\(huge)")
            for name in ["..%2F..%2Fetc", "a%00b", String(repeating: "n", count: 10_000), "-x", ".hidden"] {
                let reply = try await hub.hubRequest("/v1/models/\(name)/versions", method: "POST", body: model)
                #expect(reply.status == 400 || reply.status == 404, "\(name.prefix(20)): \(reply.status)")
            }
            let list = try await hub.hubRequest("/v1/models", key: nil)
            #expect(String(decoding: list.body, as: UTF8.self) == #"{"models":[]}"# + "\n")
            let blobs =
                (try? FileManager.default.contentsOfDirectory(atPath: setup.folder.path("data/blobs/sha256"))) ?? []
            #expect(blobs.isEmpty, "\(blobs)")
            #expect(!FileManager.default.fileExists(atPath: setup.folder.path("data/evil.txt")))
            let staging =
                (try? FileManager.default.contentsOfDirectory(atPath: setup.folder.path("data/staging"))) ?? []
            #expect(staging.isEmpty, "\(staging)")
        }
    }

    @Test("The hub's OpenAPI document holds: schemathesis (with the admin key) finds no 5xx and no response off it")
    func openAPI() async throws {
        let schemathesis = Fixtures.path(".venv-test/bin/schemathesis")
        try #require(FileManager.default.isExecutableFile(atPath: schemathesis), "run scripts/setup-test-python.sh")
        try await Setup.with { setup in
            let hub = setup.hub
            let pushed = try await hub.hubRequest(
                "/v1/models/m/versions?alias=production", method: "POST", body: try Fixtures.data(Self.tflite))
            #expect(pushed.status == 201)
            let wrongMethod = try await hub.hubRequest("/v1/models", method: "PATCH")
            #expect(wrongMethod.status == 405 && wrongMethod.headers["allow"] == "GET")
            let (address, folder) = (hub.address, setup.folder.url.path)
            // 60 s a request, not schemathesis's 10: a slow answer on a loaded machine is not a failure.
            let run = try await OffPool.run {
                try ProcessResult.run(
                    schemathesis,
                    [
                        "run", address + "/openapi.json", "--checks", "all", "--exclude-checks",
                        "positive_data_acceptance", "--max-examples", "25", "--seed", "20261123",
                        "--request-timeout", "60", "--no-color", "-H", "Authorization: Bearer \(HubProcess.adminKey)",
                    ], environment: ["SCHEMATHESIS_HOOKS": nil], workingDirectory: folder)
            }
            #expect(run.status == 0, "\(run.stdout.suffix(3000))")
            let summary = run.stdout.firstMatch(of: /(\d+) generated, (\d+) passed\n/)
            #expect(summary != nil && summary?.1 == summary?.2, "\(run.stdout.suffix(1500))")
        }
    }

    @Test("A weighted alias splits clients deterministically (90/10) and the hub counts adoption per version")
    func stagedRollout() async throws {
        try await Setup.with { setup in
            let hub = setup.hub
            let data = try Fixtures.data(Self.tflite)
            _ = try await hub.hubRequest("/v1/models/m/versions", method: "POST", body: data)
            _ = try await hub.hubRequest("/v1/models/m/versions", method: "POST", body: data)
            let set = try await hub.hubRequest(
                "/v1/models/m/aliases/production", method: "PUT",
                body: Data(#"{"targets": [{"version": 1, "weight": 90}, {"version": 2, "weight": 10}]}"#.utf8),
                headers: ["Content-Type": "application/json"])
            #expect(set.status == 200, "\(String(decoding: set.body, as: UTF8.self))")
            var counts: [Int: Int] = [:]
            // Adoption counts clients that resolve with a key (anonymous ids could be forged).
            for client in 0..<200 {
                let reply = try await hub.hubRequest("/v1/models/m/resolve?ref=production&client=c\(client)")
                let version =
                    (try JSONSerialization.jsonObject(with: reply.body) as? [String: Any])?["version"] as? Int ?? 0
                counts[version, default: 0] += 1
                if client < 5 {
                    let again = try await hub.hubRequest(
                        "/v1/models/m/resolve?ref=production&client=c\(client)", key: nil)
                    #expect(
                        (try JSONSerialization.jsonObject(with: again.body) as? [String: Any])?["version"] as? Int
                            == version)
                }
            }
            #expect((160...195).contains(counts[1] ?? 0) && (counts[1] ?? 0) + (counts[2] ?? 0) == 200, "\(counts)")
            let adoption = try await hub.hubRequest("/v1/models/m/adoption", key: nil)
            let versions =
                (try JSONSerialization.jsonObject(with: adoption.body) as? [String: Any])?["versions"]
                as? [[String: Int]]
            #expect(versions?.map { $0["clients"] ?? 0 } == [counts[1] ?? 0, counts[2] ?? 0], "\(versions ?? [])")
            let bad = try await hub.hubRequest(
                "/v1/models/m/aliases/production", method: "PUT",
                body: Data(#"{"targets": [{"version": 1, "weight": 90}, {"version": 2, "weight": 20}]}"#.utf8))
            #expect(bad.status == 400)
        }
    }
}
