import Foundation
import NetRunnerTestSupport
import Testing

/// The hub and its client against hostile peers: a lying hub (digests that are paths, sizes
/// that never end, download URLs on other hosts, numbers no client expects) and hostile clients
/// of `hub serve` (numbers that overflow, uploads cut short, adoption forged by the thousand).
@Suite("netrunner hub against hostile hubs and clients", .serialized)
struct HubHostileTests {
    static let tflite = "Models/mobilenet_v2_1.0_224_uint8_metadata.tflite"
    static let digest = "f3594f132b91cffd0b45c85f33056564e98c4125c107ea964de7d5accf1dacae"

    /// What a run of `netrunner` gave, and whether it had to be killed at its deadline.
    struct Run: CustomStringConvertible {
        var status: Int32
        var signalled: Bool
        var stdout: String
        var stderr: String
        var seconds: Double
        var killed: Bool
        var description: String { "status \(status) after \(Int(seconds)) s\(killed ? " (killed)" : ""): \(stderr)" }
    }

    /// Runs `netrunner` with a cache of its own, killed if it outlives `deadline` seconds.
    static func netrunner(
        _ arguments: [String], cache: String, token: String? = nil, deadline: TimeInterval = 60
    ) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixtures.netrunner)
        process.arguments = arguments
        SpawnLog.record(Fixtures.netrunner, arguments)
        var environment = ProcessInfo.processInfo.environment
        environment["NETRUNNER_CACHE_DIR"] = cache
        environment["NETRUNNER_HUB"] = nil
        environment["NETRUNNER_HUB_TOKEN"] = token
        process.environment = environment
        let (out, err) = (Pipe(), Pipe())
        process.standardOutput = out
        process.standardError = err
        let started = Date()
        try process.run()
        let group = DispatchGroup()
        nonisolated(unsafe) var outData = Data()
        nonisolated(unsafe) var errData = Data()
        DispatchQueue.global().async(group: group) { outData = out.fileHandleForReading.readDataToEndOfFile() }
        DispatchQueue.global().async(group: group) { errData = err.fileHandleForReading.readDataToEndOfFile() }
        var killed = false
        while process.isRunning {
            if Date().timeIntervalSince(started) > deadline {
                kill(process.processIdentifier, SIGKILL)
                killed = true
                break
            }
            usleep(20_000)
        }
        process.waitUntilExit()
        group.wait()
        return Run(
            status: process.terminationStatus, signalled: process.terminationReason == .uncaughtSignal,
            stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self),
            seconds: Date().timeIntervalSince(started), killed: killed)
    }

    /// A resolve answer.
    static func resolution(
        sha256: Any = digest, size: Any = 4_059_384, version: Any = 1, download: String = "/blob"
    ) -> [String: Any] {
        [
            "name": "m", "reference": "latest", "version": version, "sha256": sha256, "size": size,
            "format": "tflite", "download": download,
        ]
    }

    /// Every file under `folder` but the cache and the fake hub's own, with its contents.
    static func snapshot(_ folder: TemporaryFolder) -> [String: Data] {
        var files: [String: Data] = [:]
        let base = folder.url.path
        for path in (FileManager.default.subpaths(atPath: base) ?? [])
        where !path.hasPrefix("cache") && !path.hasPrefix("fake") {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: base + "/" + path, isDirectory: &isFolder) else { continue }
            files[path] =
                isFolder.boolValue ? Data("folder".utf8) : FileManager.default.contents(atPath: base + "/" + path)
        }
        return files
    }

    // MARK: A lying hub

    @Test(
        "A hub's digest never reaches a path: traversal, case, length and prefixes refused before any file is touched")
    func hostileDigests() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-fakehub")
        defer { folder.remove() }
        let hub = try FakeHub(folder: folder.path("fake"))
        defer { hub.stop() }
        let model = try Fixtures.data(Self.tflite)
        // Beside the cache (cache/hub/{blobs/sha256,partial}): a model, a folder, a partial file.
        try model.write(to: URL(fileURLWithPath: folder.path("outside.tflite")))
        try FileManager.default.createDirectory(atPath: folder.path("escape"), withIntermediateDirectories: true)
        try Data("sentinel".utf8).write(to: URL(fileURLWithPath: folder.path("victim.part")))
        let before = Self.snapshot(folder)
        let digests = [
            "../../../../outside", "../../../escape/pwned", "../../../victim", Self.digest.uppercased(),
            String(Self.digest.dropLast()), Self.digest + "0", "sha256:" + Self.digest,
            String(Self.digest.dropLast(2)) + "/x", String(Self.digest.dropLast()) + "\u{0}", "",
        ]
        for digest in digests {
            try hub.script([
                "/v1/models/m/resolve": ["json": Self.resolution(sha256: digest, size: model.count)],
                "/blob": ["bytes": model.count],
            ])
            let pull = try Self.netrunner(["hub", "pull", "m", "--hub", hub.address], cache: folder.path("cache"))
            #expect(pull.status == 1 && !pull.signalled, "\(digest.debugDescription): \(pull)")
            #expect(pull.stderr.contains("is not a SHA-256 digest"), "\(digest.debugDescription): \(pull)")
            #expect(Self.snapshot(folder) == before, "\(digest.debugDescription) touched a file beside the cache")
            #expect(!hub.received().contains { $0.path == "/blob" }, "\(digest.debugDescription) was downloaded")
        }
        // --model hub: refuses it too, rather than running the file beside the cache.
        try hub.script(["/v1/models/m/resolve": ["json": Self.resolution(sha256: "../../../../outside")]])
        let classify = try Self.netrunner(
            [
                "classify", "--model", "hub:m", "--hub", hub.address,
                Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg"),
            ], cache: folder.path("cache"))
        #expect(classify.status != 0 && classify.stderr.contains("is not a SHA-256 digest"), "\(classify)")
        #expect(Self.snapshot(folder) == before)
    }

    @Test(
        "Sizes and numbers from a hub: over --max-download-bytes refused before a byte is asked for; negative, huge and non-numbers are errors, not traps"
    )
    func hostileNumbers() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-fakehub")
        defer { folder.remove() }
        let hub = try FakeHub(folder: folder.path("fake"))
        defer { hub.stop() }
        let cache = folder.path("cache")
        // 10^13 bytes declared, an endless body: refused at once, nothing written.
        try hub.script([
            "/v1/models/m/resolve": ["json": Self.resolution(size: 10_000_000_000_000)], "/blob": ["endless": true],
        ])
        let huge = try Self.netrunner(["hub", "pull", "m", "--hub", hub.address], cache: cache, deadline: 30)
        #expect(huge.status == 1 && !huge.killed, "\(huge)")
        #expect(huge.stderr.contains("10000000000000 bytes") && huge.stderr.contains("--max-download-bytes"), "\(huge)")
        #expect(!hub.received().contains { $0.path == "/blob" })
        #expect(TemporaryFolder.bytes(under: cache + "/hub/partial") == 0)
        // A smaller limit, from the flag.
        try hub.script(["/v1/models/m/resolve": ["json": Self.resolution()], "/blob": ["bytes": 4_059_384]])
        let limited = try Self.netrunner(
            ["hub", "pull", "m", "--hub", hub.address, "--max-download-bytes", "1000000"], cache: cache)
        #expect(limited.status == 1 && limited.stderr.contains("at most 1000000 bytes"), "\(limited)")
        #expect(!hub.received().contains { $0.path == "/blob" })
        let badFlag = try Self.netrunner(
            ["hub", "pull", "m", "--hub", hub.address, "--max-download-bytes", "-1"], cache: cache)
        #expect(badFlag.status != 0 && badFlag.stderr.contains("--max-download-bytes"), "\(badFlag)")
        // Numbers no hub should send.
        let hostile: [String] = [
            #""size": -1"#, #""size": 0"#, #""size": 1e30"#, #""size": NaN"#, #""size": 1e400"#, #""size": "12""#,
            #""size": 9223372036854775808"#, #""version": -5"#, #""version": 1e30"#, #""version": 0.5"#,
            #""version": 9223372036854775807"#, #""sha256": 1e30"#, #""size": Infinity"#,
        ]
        for field in hostile {
            let key = String(field.prefix { $0 != ":" })
            let kept = [#""size": 4059384"#, #""version": 1"#, #""sha256": "\#(Self.digest)""#].filter {
                !$0.hasPrefix(key + ":")
            }
            let raw =
                #"{"name": "m", "reference": "latest", "format": "tflite", "download": "/blob", "#
                + (kept + [field]).joined(separator: ", ") + "}"
            try hub.script(["/v1/models/m/resolve": ["raw": raw], "/blob": ["endless": true]])
            let pull = try Self.netrunner(["hub", "pull", "m", "--hub", hub.address], cache: cache, deadline: 30)
            #expect(pull.status == 1 && !pull.signalled && !pull.killed, "\(field): \(pull)")
            #expect(pull.stderr.contains("The hub at \(hub.address)"), "\(field): \(pull)")
            #expect(!hub.received().contains { $0.path == "/blob" }, "\(field)")
        }
    }

    @Test("A body longer than its declared size is stopped there and not kept; a short one is not installed")
    func lyingBodies() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-fakehub")
        defer { folder.remove() }
        let hub = try FakeHub(folder: folder.path("fake"))
        defer { hub.stop() }
        let cache = folder.path("cache")
        let partial = cache + "/hub/partial"
        let bodies: [(String, [String: Any])] = [
            ("endless, no Content-Length", ["endless": true]),
            ("Content-Length over the declared size", ["bytes": 200_000]),
            ("Content-Length over, body endless", ["endless": true, "content_length": 200_000]),
        ]
        for (label, blob) in bodies {
            try hub.script(["/v1/models/m/resolve": ["json": Self.resolution(size: 100_000)], "/blob": blob])
            let pull = try Self.netrunner(["hub", "pull", "m", "--hub", hub.address], cache: cache, deadline: 30)
            #expect(pull.status == 1 && !pull.killed, "\(label): \(pull)")
            #expect(pull.stderr.contains("more than the 100000 bytes published"), "\(label): \(pull)")
            #expect(TemporaryFolder.bytes(under: partial) == 0, "\(label): the partial file was kept")
            #expect(hub.received().filter { $0.path == "/blob" }.count == 1, "\(label): retried")
        }
        try hub.script([
            "/v1/models/m/resolve": ["json": Self.resolution(size: 100_000)], "/blob": ["bytes": 50_000],
        ])
        let short = try Self.netrunner(["hub", "pull", "m", "--hub", hub.address], cache: cache, deadline: 60)
        #expect(short.status == 1 && short.stderr.contains("50000 of 100000 bytes"), "\(short)")
        #expect(TemporaryFolder.bytes(under: cache + "/hub/blobs/sha256") == 0)
    }

    @Test("The token goes only to the hub's origin, whatever the download field or a redirect says")
    func tokenStaysHome() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-fakehub")
        defer { folder.remove() }
        let hub = try FakeHub(folder: folder.path("fake"))
        defer { hub.stop() }
        let elsewhere = try FakeHub(folder: folder.path("fake-elsewhere"))
        defer { elsewhere.stop() }
        let token = "nrh_secret_token"
        let other = "127.0.0.1:\(elsewhere.port)"
        let model = try Fixtures.data(Self.tflite)
        for download in [
            "@\(other)/steal", "http://\(other)/steal", "//\(other)/steal", "HTTP://\(other)/steal",
            "http://\(token)@\(other)/steal", "/moved", "http://localhost:\(hub.port)/blob",
        ] {
            try hub.script([
                "/v1/models/m/resolve": ["json": Self.resolution(download: download)],
                "/moved": ["status": 302, "headers": ["Location": "http://\(other)/steal"], "bytes": 0],
            ])
            try elsewhere.script([:])
            let pull = try Self.netrunner(
                ["hub", "pull", "m", "--hub", hub.address], cache: folder.path("cache"), token: token)
            #expect(pull.status == 1 && !pull.signalled, "\(download): \(pull)")
            #expect(hub.received().first?.authorization == "Bearer \(token)", "\(download)")
            let leaked =
                elsewhere.received().filter { $0.authorization != nil || $0.path.contains(token) }
                + hub.received().filter { $0.path == "/blob" && $0.authorization != nil }
            #expect(leaked.isEmpty, "\(download): the token reached another origin: \(leaked)")
        }
        // The hub's own blobs still get it (a --private hub needs it there).
        try hub.script([
            "/v1/models/m/resolve": ["json": Self.resolution(size: model.count)],
            "/blob": ["file": Fixtures.path(Self.tflite)],
        ])
        let pull = try Self.netrunner(
            ["hub", "pull", "m", "--hub", hub.address], cache: folder.path("cache"), token: token)
        #expect(pull.status == 0 && pull.stdout.contains("m@1 sha256 \(Self.digest)"), "\(pull)")
        #expect(hub.received().last == .init(method: "GET", path: "/blob", authorization: "Bearer \(token)"))
    }

    // MARK: Hostile clients of hub serve

    /// Runs `body` with a hub in process in a fresh folder holding `versions` versions of the
    /// test model, then stops it (expecting a clean stop) and removes the folder.
    static func served<Value>(
        _ arguments: [String] = [], versions: Int = 2, sourceLocation: SourceLocation = #_sourceLocation,
        _ body: (LiveServer, TemporaryFolder) async throws -> Value
    ) async throws -> Value {
        let folder = try TemporaryFolder(prefix: "netrunner-hub")
        defer { folder.remove() }
        return try await LiveServer.hub(data: folder.path("data"), arguments: arguments, sourceLocation: sourceLocation)
        {
            hub in
            let data = try Fixtures.data(HubHostileTests.tflite)
            for _ in 0..<versions {
                let pushed = try await hub.hubRequest("/v1/models/m/versions", method: "POST", body: data)
                #expect(pushed.status == 201)
            }
            return try await body(hub, folder)
        }
    }

    @Test(
        "Numbers sent to hub serve (weights, versions, refs, ranges; JSON, path, query, header, CLI) are checked: 4xx, the hub lives"
    )
    func hostileNumbersToTheHub() async throws {
        try await Self.served { hub, folder in
            let bodies = [
                #"{"targets":[{"version":1,"weight":9223372036854775807},{"version":2,"weight":1}]}"#,
                #"{"targets":[{"version":1,"weight":-9223372036854775808},{"version":2,"weight":1}]}"#,
                #"{"targets":[{"version":1,"weight":101},{"version":2,"weight":-1}]}"#,
                #"{"targets":[{"version":1,"weight":1e30},{"version":2,"weight":1}]}"#,
                #"{"targets":[{"version":1,"weight":NaN},{"version":2,"weight":1}]}"#,
                #"{"targets":[{"version":9223372036854775807,"weight":100}]}"#,
                #"{"targets":[{"version":2147483648,"weight":100}]}"#,
                #"{"version":9223372036854775807}"#, #"{"version":-1}"#, #"{"version":0}"#, #"{"version":1e30}"#,
                #"{"version":1.5}"#, #"{"version":"1"}"#, "not json", "",
                "{\"targets\":[" + Array(repeating: #"{"version":1,"weight":1}"#, count: 2000).joined(separator: ",")
                    + "]}",
            ]
            for body in bodies {
                let reply = try await hub.hubRequest(
                    "/v1/models/m/aliases/canary", method: "PUT", body: Data(body.utf8),
                    headers: ["Content-Type": "text/plain"])
                #expect(reply.status == 400, "\(body.prefix(80)): \(reply.status)")
            }
            for path in [
                "/v1/models/m/versions/9223372036854775807", "/v1/models/m/versions/99999999999999999999",
                "/v1/models/m/versions/-1", "/v1/models/m/versions/0", "/v1/models/m/versions/1e3",
                "/v1/models/m/resolve?ref=99999999999999999999", "/v1/models/m/resolve?ref=9223372036854775807",
                "/v1/models/m/resolve?ref=-1",
            ] {
                let reply = try await hub.hubRequest(path, key: nil)
                #expect(reply.status == 400, "\(path): \(reply.status)")
            }
            let deleted = try await hub.hubRequest("/v1/models/m/versions/9223372036854775807", method: "DELETE")
            #expect(deleted.status == 400)
            let blob = "/v1/blobs/sha256:\(Self.digest)"
            for range in [
                "bytes=-9223372036854775807", "bytes=9223372036854775807-", "bytes=0-99999999999999999999999",
                "bytes=-99999999999999999999999", "bytes=--1", "bytes=-0", "bytes=5-4", "bytes=+1-2", "bytes= 1-2",
            ] {
                let reply = try await hub.hubRequest(blob, headers: ["Range": range], key: nil)
                #expect([206, 416].contains(reply.status), "\(range): \(reply.status)")
            }
            let whole = try await hub.hubRequest(blob, headers: ["Range": "bytes=-9223372036854775807"], key: nil)
            #expect(whole.status == 206 && whole.body.count == 4_059_384)
            // The CLI checks before it sends.
            let cache = folder.path("cache")
            for targets in [
                ["1:9223372036854775807", "2:1"], [""], [":"], ["1:50", "99999999999999999999:50"], ["1:-5"],
            ] {
                // On a thread of its own: the hub in process answers on the cooperative pool.
                let address = hub.address
                let run = try await OffPool.run {
                    try Self.netrunner(
                        ["hub", "alias", "m", "canary"] + targets + ["--hub", address], cache: cache,
                        token: HubProcess.adminKey)
                }
                #expect(run.status != 0 && !run.signalled && run.stderr.contains("Error:"), "\(targets): \(run)")
            }
            let good = try await hub.hubRequest(
                "/v1/models/m/aliases/canary", method: "PUT",
                body: Data(#"{"targets":[{"version":1,"weight":60},{"version":2,"weight":40}]}"#.utf8))
            #expect(good.status == 200)
            #expect(try await hub.hubRequest("/v1/health", key: nil).status == 200)
        }
    }

    @Test(
        "Adoption counts only clients with a key, at most --adoption-limit per model: 2,000 anonymous ids leave the store as it was"
    )
    func boundedAdoption() async throws {
        try await Self.served(["--adoption-limit", "50"], versions: 1) { hub, folder in
            let files = ["hub.sqlite", "hub.sqlite-wal"].map { folder.path("data/" + $0) }
            let size = {
                files.map { (try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int) ?? 0 }.reduce(0, +)
            }
            let before = size()
            try await withThrowingTaskGroup(of: Int.self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        var ok = 0
                        for client in stride(from: worker, to: 2000, by: 8) {
                            let reply = try await hub.hubRequest("/v1/models/m/resolve?client=anon-\(client)", key: nil)
                            if reply.status == 200 { ok += 1 }
                        }
                        return ok
                    }
                }
                var ok = 0
                for try await count in group { ok += count }
                #expect(ok == 2000)
            }
            let counted = { () async throws -> Int in
                let reply = try await hub.hubRequest("/v1/models/m/adoption", key: nil)
                let versions =
                    (try JSONSerialization.jsonObject(with: reply.body) as? [String: Any])?["versions"]
                    as? [[String: Int]]
                return (versions ?? []).reduce(0) { $0 + ($1["clients"] ?? 0) }
            }
            #expect(try await counted() == 0)
            #expect(size() - before < 64 << 10, "the store grew by \(size() - before) bytes")
            // With a key: counted, up to the limit.
            for client in 0..<80 {
                #expect(try await hub.hubRequest("/v1/models/m/resolve?client=keyed-\(client)").status == 200)
            }
            #expect(try await counted() == 50)
        }
    }

    @Test("Bodies cut short, malformed or of the wrong type are the client's fault: 400, never 500")
    func truncatedBodies() async throws {
        let folder = try TemporaryFolder(prefix: "netrunner-hub")
        defer { folder.remove() }
        try await LiveServer.hub(data: folder.path("data")) { hub in
            let port = String(hub.address.split(separator: ":").last ?? "")
            for (method, path) in [
                ("POST", "/v1/models/x/versions"), ("PUT", "/v1/models/x/aliases/a"), ("POST", "/v1/keys"),
            ] {
                // On a thread of its own: the hub in process answers on the cooperative pool.
                let run = try await OffPool.run {
                    try ProcessResult.run(
                        "/usr/bin/env",
                        [
                            "python3", "-c",
                            """
                            import socket, sys
                            s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
                            s.sendall(b"\(method) \(path) HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nAuthorization: Bearer \(HubProcess.adminKey)\\r\\nContent-Type: application/json\\r\\nContent-Length: 10000\\r\\n\\r\\n" + b"PK" * 500)
                            s.shutdown(socket.SHUT_WR)
                            s.settimeout(30)
                            print(s.recv(65536).decode(errors="replace"))
                            """,
                            port,
                        ])
                }
                #expect(run.stdout.hasPrefix("HTTP/1.1 400"), "\(method) \(path): \(run.stdout.prefix(600))")
                #expect(run.stdout.contains("ended before"), "\(method) \(path): \(run.stdout.prefix(600))")
            }
        }
    }
}
