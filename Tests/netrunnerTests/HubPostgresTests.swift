import Foundation
import NetRunnerTestSupport
import Testing

/// The hub on PostgreSQL (Debian's, started by scripts/start-test-postgres.sh, which `make test`
/// runs): several nodes on one database and one data folder, as a hub grows past one machine.
@Suite("netrunner hub on PostgreSQL", .serialized)
struct HubPostgresTests {
    static let tflite = "Models/mobilenet_v2_1.0_224_uint8_metadata.tflite"

    /// Runs one SQL text with `psql` on the database of `url` (a node's URL, `?tlsmode=disable`
    /// and all): its rows unaligned, without headers.
    static func psql(_ url: String, _ sql: String) throws -> ProcessResult {
        try ProcessResult.run(
            "/usr/bin/env", ["psql", url.replacingOccurrences(of: "?tlsmode=disable", with: ""), "-qtAc", sql])
    }

    /// A new, empty database on the test server, and its URL.
    static func freshDatabase() throws -> String {
        let server = try #require(
            ProcessInfo.processInfo.environment["NETRUNNER_TEST_POSTGRES"],
            "NETRUNNER_TEST_POSTGRES is not set: run scripts/start-test-postgres.sh (make test does)")
        let name = "hub_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let made = try psql(server, "CREATE DATABASE \(name)")
        #expect(made.status == 0, "\(made.stderr)")
        guard let at = server.range(of: "@"),
            let slash = server.range(of: "/", options: .backwards, range: at.upperBound..<server.endIndex)
        else { return server }
        return String(server[..<slash.lowerBound]) + "/" + name + "?tlsmode=disable"
    }

    /// Two hub nodes on one database and one data folder.
    static func twoNodes(database: String, data: String) throws -> (HubProcess, HubProcess) {
        let first = try HubProcess(data: data, arguments: ["--database", database])
        do {
            return (first, try HubProcess(data: data, arguments: ["--database", database]))
        } catch {
            first.stop()
            throw error
        }
    }

    @Test("Two hub nodes on one database publishing the same name at once: every version once, none lost")
    func twoNodes() async throws {
        let database = try Self.freshDatabase()
        let folder = try TemporaryFolder(prefix: "netrunner-hub-pg")
        defer { folder.remove() }
        let (first, second) = try Self.twoNodes(database: database, data: folder.path("data"))
        defer { first.stop() }
        defer { second.stop() }
        let data = try Fixtures.data(Self.tflite)
        let numbers = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<16 {
                group.addTask {
                    let node = index % 2 == 0 ? first : second
                    let reply = try await node.request("/v1/models/m/versions", method: "POST", body: data)
                    let json = try JSONSerialization.jsonObject(with: reply.body) as? [String: Any]
                    return json?["version"] as? Int ?? -reply.status
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(numbers.sorted() == Array(1...16), "\(numbers.sorted())")
        for node in [first, second] {
            let model = try await node.request("/v1/models/m", key: nil)
            let versions =
                (try JSONSerialization.jsonObject(with: model.body) as? [String: Any])?["versions"]
                as? [[String: Any]]
            #expect(versions?.compactMap { $0["version"] as? Int } == Array(1...16))
        }
        // An alias moved on one node is seen on the other, with one history.
        let moved = try await first.request(
            "/v1/models/m/aliases/production", method: "PUT", body: Data(#"{"version": 3}"#.utf8))
        #expect(moved.status == 200)
        let again = try await second.request(
            "/v1/models/m/aliases/production", method: "PUT", body: Data(#"{"version": 9}"#.utf8))
        #expect(again.status == 200)
        let rolled = try await first.request("/v1/models/m/aliases/production/rollback", method: "POST")
        #expect(
            (try JSONSerialization.jsonObject(with: rolled.body) as? [String: Any])?["targets"] as? [[String: Int]]
                == [["version": 3, "weight": 100]])
        let history = try await second.request("/v1/models/m/aliases/production/history", key: nil)
        let entries =
            (try JSONSerialization.jsonObject(with: history.body) as? [String: Any])?["history"] as? [[String: Any]]
        #expect(entries?.compactMap { $0["action"] as? String } == ["set", "set", "rollback"])
        // Adoption on PostgreSQL: keyed clients counted once each across nodes, anonymous ones not.
        for (index, node) in [first, second, first].enumerated() {
            #expect(try await node.request("/v1/models/m/resolve?ref=3&client=keyed-\(index % 2)").status == 200)
            #expect(try await node.request("/v1/models/m/resolve?ref=3&client=anon-\(index)", key: nil).status == 200)
        }
        let adoption = try await second.request("/v1/models/m/adoption", key: nil)
        #expect(String(decoding: adoption.body, as: UTF8.self) == #"{"versions":[{"clients":2,"version":3}]}"# + "\n")
    }

    @Test("PostgreSQL ends a node's session (pg_terminate_backend): the node connects again and goes on")
    func connectionCut() async throws {
        let database = try Self.freshDatabase()
        let name = try #require(database.split(separator: "/").last?.split(separator: "?").first.map(String.init))
        let folder = try TemporaryFolder(prefix: "netrunner-hub-pg")
        defer { folder.remove() }
        let node = try HubProcess(data: folder.path("data"), arguments: ["--database", database])
        defer { node.stop() }
        let data = try Fixtures.data(Self.tflite)
        #expect(try await node.request("/v1/models/m/versions", method: "POST", body: data).status == 201)
        let admin = try #require(ProcessInfo.processInfo.environment["NETRUNNER_TEST_POSTGRES"])
        let cut = try Self.psql(
            admin, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '\(name)'")
        // Every session of the node's database ended: one, or two when its pool had opened a
        // second connection for a query that overlapped (a loaded CI run saw 2); none would test
        // nothing.
        let ended = Int(cut.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(cut.status == 0 && ended >= 1, "\(cut)")
        // At most the request that meets the closed connection fails; the next ones answer.
        var statuses: [Int] = []
        for _ in 0..<20 {
            // (A node that lost its connection for good used to hang here: postgres-nio never
            // answers a query written to a closed connection.)
            let listed = try? await node.request("/v1/models/m", key: nil, timeout: 10)
            statuses.append(listed?.status ?? 0)
            if listed == nil { break }
            if listed?.status == 200 { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        try #require(statuses.last == 200 && statuses.count <= 2, "\(statuses)")
        let second = try await node.request("/v1/models/m/versions", method: "POST", body: data)
        #expect(second.status == 201)
        #expect((try JSONSerialization.jsonObject(with: second.body) as? [String: Any])?["version"] as? Int == 2)
    }

    @Test(
        "A statement stuck behind another session's lock: 503 with Retry-After at the deadline, then the node connects again"
    )
    func statementDeadline() async throws {
        let database = try Self.freshDatabase()
        let folder = try TemporaryFolder(prefix: "netrunner-hub-pg")
        defer { folder.remove() }
        let node = try HubProcess(
            data: folder.path("data"), arguments: ["--database", database, "--database-timeout", "2"])
        defer { node.stop() }
        let data = try Fixtures.data(Self.tflite)
        #expect(try await node.request("/v1/models/m/versions", method: "POST", body: data).status == 201)
        // Another session holds the versions table (a migration, an administrator) for up to a
        // minute: far longer than the deadline, however slow the machine, and ended below.
        let locker = Process()
        locker.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        locker.arguments = [
            "psql", database.replacingOccurrences(of: "?tlsmode=disable", with: ""), "-qc",
            "BEGIN; LOCK TABLE hub_versions IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(60); COMMIT;",
        ]
        locker.standardOutput = FileHandle.nullDevice
        try locker.run()
        defer { locker.waitUntilExit() }
        var locked = false
        for _ in 0..<100 where !locked {
            let held = try Self.psql(
                database,
                "SELECT count(*) FROM pg_locks WHERE relation = 'hub_versions'::regclass AND mode = 'AccessExclusiveLock' AND granted"
            )
            locked = held.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1"
            if !locked { try await Task.sleep(for: .milliseconds(50)) }
        }
        try #require(locked, "the lock was not taken")
        let asked = Date()
        let stuck = try await node.request("/v1/models/m", key: nil, timeout: 90)
        let waited = Date().timeIntervalSince(asked)
        #expect(stuck.status == 503, "\(String(decoding: stuck.body, as: UTF8.self))")
        #expect(stuck.headers["retry-after"] == "1")
        #expect(String(decoding: stuck.body, as: UTF8.self).contains("did not answer within 2 s"))
        // Without the deadline it would wait for the lock: a minute.
        #expect(waited > 1.5 && waited < 30, "answered after \(waited) s")
        // Once the lock is gone, the node answers again (on a new connection).
        let name = try #require(database.split(separator: "/").last?.split(separator: "?").first.map(String.init))
        let ended = try Self.psql(
            database,
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '\(name)' AND query LIKE '%pg_sleep(60)%' AND pid <> pg_backend_pid()"
        )
        #expect(ended.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1", "\(ended)")
        locker.waitUntilExit()
        let after = try await node.request("/v1/models/m", key: nil, timeout: 30)
        #expect(after.status == 200, "\(String(decoding: after.body, as: UTF8.self))")
        #expect(try await node.request("/v1/models/m/versions", method: "POST", body: data).status == 201)
    }

    @Test("A node killed (-9) mid-upload on PostgreSQL: no half version; restarted, it keeps everything")
    func crashMidUpload() async throws {
        let database = try Self.freshDatabase()
        let folder = try TemporaryFolder(prefix: "netrunner-hub-pg")
        defer { folder.remove() }
        let hub = try HubProcess(data: folder.path("data"), arguments: ["--database", database])
        defer { hub.stop() }
        let data = try Fixtures.data(Self.tflite)
        #expect(try await hub.request("/v1/models/m/versions", method: "POST", body: data).status == 201)
        try await hub.killMidUploadAndRestart(file: Fixtures.path(Self.tflite), name: "m")
        #expect(try await hub.request("/v1/models/m/versions", method: "POST", body: data).status == 201)
        let model = try await hub.request("/v1/models/m", key: nil)
        let versions =
            (try JSONSerialization.jsonObject(with: model.body) as? [String: Any])?["versions"] as? [[String: Any]]
        #expect(versions?.compactMap { $0["version"] as? Int } == [1, 2])
    }

    @Test(
        "Two nodes behind nginx: the node serving a 45 MB download killed (-9) mid-way, the client resumes from the other"
    )
    func failoverBehindNginx() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx"), "make test installs nginx")
        let database = try Self.freshDatabase()
        let folder = try TemporaryFolder(prefix: "netrunner-hub-pg")
        defer { folder.remove() }
        let (first, second) = try Self.twoNodes(database: database, data: folder.path("data"))
        defer { first.stop() }
        defer { second.stop() }
        // The shipped configuration, with the second node as the backup, so the download starts
        // on the first.
        let port = { (address: String) in address.split(separator: ":").last.map(String.init) ?? "" }
        let nginx = try NginxProcess(
            site: "deploy/nginx/netrunner-hub.conf", folder: folder.url.path, listen: "listen 127.0.0.1:8090;",
            replacing: [
                "    server 127.0.0.1:8091 max_fails=1 fail_timeout=5s;\n    server 127.0.0.1:8092 max_fails=1 fail_timeout=5s;":
                    "    server 127.0.0.1:\(port(first.address)) max_fails=1 fail_timeout=5s;\n"
                    + "    server 127.0.0.1:\(port(second.address)) backup;"
            ])
        defer { nginx.stop() }
        let hub = nginx.url("")
        let environment: [String: String?] = [
            "NETRUNNER_HUB": hub, "NETRUNNER_CACHE_DIR": folder.path("cache"),
            "NETRUNNER_HUB_TOKEN": HubProcess.adminKey,
        ]
        // 45 MB: the float32 MobileNetV2 bundle with 32 MB of padding, zipped, published through
        // nginx (more than the kernel buffers between the node, nginx and the client hold, so
        // killing the node cuts the download).
        let zip = folder.path("float.tiobundle.zip")
        try ZipFixture.writeFloatBundle(to: zip, padding: 32 << 20)
        let push = try ProcessResult.run(
            Fixtures.netrunner, ["hub", "push", zip, "--name", "float"], environment: environment)
        #expect(push.status == 0, "\(push.stderr)")

        // A pull at 8 MB/s (about 6 s for the whole file).
        let pull = Process()
        pull.executableURL = URL(fileURLWithPath: Fixtures.netrunner)
        pull.arguments = ["hub", "pull", "float", "--max-bytes-per-second", "8000000"]
        var inherited = ProcessInfo.processInfo.environment
        for (key, value) in environment { inherited[key] = value }
        inherited["NETRUNNER_CACHE_DIR"] = folder.path("client-cache")  // another machine's cache
        pull.environment = inherited
        let output = Pipe()
        let errors = Pipe()
        pull.standardOutput = output
        pull.standardError = errors
        try pull.run()
        // The first node killed once about a tenth has arrived: polled, not slept, since on a busy
        // machine a sleeping task can wake after the whole download is done (seen under ASan).
        while pull.isRunning, TemporaryFolder.bytes(under: folder.path("client-cache")) < 4_000_000 { usleep(20_000) }
        first.kill()
        pull.waitUntilExit()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(pull.terminationStatus == 0, "\(stderr)")
        let stdout = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let path = try #require(stdout.split(separator: "\n").last.map(String.init))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(contentsOf: URL(fileURLWithPath: zip)))
        // The rest came from the second node as a range: "206 bytes=N- <second node>".
        let log = nginx.accessLog
        let resumed = log.split(separator: "\n").contains {
            $0.hasPrefix("206 bytes=") && $0.hasSuffix(port(second.address))
        }
        #expect(resumed, "\(log) \(stderr) \(nginx.errorLog)")
    }
}
