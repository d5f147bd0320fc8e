import Foundation
import NetRunnerTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `netrunner serve` behind Debian's nginx, configured by `deploy/nginx/netrunner-serve.conf`:
/// workers are stateless, so losing one costs only what it had in flight, and nginx retries
/// those on another.
@Suite("netrunner serve behind nginx", .serialized)
struct LoadBalancerTests {
    static let photo = Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")

    /// A bounded load loop through nginx (tools/scale/load.py): answers and errors by kind.
    func load(_ url: String, clients: Int, seconds: Double) throws -> [String: Any] {
        let run = try ProcessResult.run(
            "/usr/bin/env",
            ["python3", Fixtures.path("tools/scale/load.py"), url, Self.photo, "\(clients)", "\(seconds)"])
        #expect(run.status == 0, "\(run.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
    }

    /// The answers nginx has logged from `worker` so far.
    func answers(from worker: ServerProcess, _ nginx: NginxProcess) -> Int {
        let upstream = "127.0.0.1:\(worker.base.port ?? 0)"
        return nginx.accessLog.split(separator: "\n").count { $0.hasPrefix("200 ") && $0.contains(upstream) }
    }

    func errors(_ report: [String: Any]) -> Int {
        (report["errors"] as? [String: Int] ?? [:]).values.reduce(0, +)
    }

    func requireNginx() throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx"),
            "run scripts/install-test-packages.sh (make test does)")
    }

    @Test(
        "Three workers under load: one killed (-9) costs at most its requests in flight, one stopped (SIGTERM) costs none"
    )
    func failover() async throws {
        try requireNginx()
        let folder = try TemporaryFolder(prefix: "netrunner-nginx")
        defer { folder.remove() }
        let workers = [
            try await ServerProcess(["--threads", "1"]), try await ServerProcess(["--threads", "1"]),
            try await ServerProcess(["--threads", "1"]),
        ]
        let nginx = try NginxProcess(upstreams: workers.map { $0.base.port ?? 0 }, folder: folder.url.path)
        defer { nginx.stop() }
        let url = nginx.url("/v1/models/mobilenet-v2-1.0-224-uint8/classify")
        let clients = 4

        let calm = try load(url, clients: clients, seconds: 2)
        #expect(errors(calm) == 0 && (calm["ok"] as? Int ?? 0) > 10, "\(calm)")

        // A worker killed mid-load (once it has answered some of this load's requests, however
        // slowly the load started): the requests it held fail over (non_idempotent retry) or, at
        // worst, are lost; every other request is answered.
        let killer = Task { [before = answers(from: workers[0], nginx)] in
            try await Eventually.wait(for: "worker 0 answering the load") {
                answers(from: workers[0], nginx) >= before + 3
            }
            kill(workers[0].process.processIdentifier, SIGKILL)
        }
        let killed = try load(url, clients: clients, seconds: 4)
        _ = try await killer.value
        #expect(errors(killed) <= clients, "\(killed)")
        #expect((killed["ok"] as? Int ?? 0) > 20, "\(killed)")

        // A worker told to stop (SIGTERM, as Kubernetes does): it finishes what it holds, nginx
        // sends the rest elsewhere; nothing is lost.
        let stopper = Task { [before = answers(from: workers[1], nginx)] in
            try await Eventually.wait(for: "worker 1 answering the load") {
                answers(from: workers[1], nginx) >= before + 3
            }
            return workers[1].stop()
        }
        let drained = try load(url, clients: clients, seconds: 4)
        #expect(try await stopper.value == 0)
        #expect(errors(drained) == 0, "\(drained)")
        #expect((drained["ok"] as? Int ?? 0) > 20, "\(drained)")
        _ = workers[2].stop()
    }

    @Test("A worker still loading its models answers 503 with Retry-After; nginx sends its requests to a warm one")
    func warmingWorker() async throws {
        try requireNginx()
        let folder = try TemporaryFolder(prefix: "netrunner-nginx")
        defer { folder.remove() }
        // A stand-in for a worker warming up: every request is 503 "still loading", as the
        // engine answers before a model is ready.
        let warming = Process()
        warming.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        warming.arguments = [
            "python3", "-c",
            """
            import http.server, sys
            class Warming(http.server.BaseHTTPRequestHandler):
                def answer(self):
                    length = int(self.headers.get("Content-Length") or 0)
                    self.rfile.read(length)
                    body = b'{"error": true, "error_description": "it is still loading; retry in a moment."}'
                    self.send_response(503); self.send_header("Retry-After", "1")
                    self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
                do_GET = do_POST = answer
                def log_message(self, *args): pass
            server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Warming)
            server.serve_forever()
            """,
            "\(LiveVideoServer.freePort())",
        ]
        let warmingPort = Int(warming.arguments?.last ?? "") ?? 0
        try warming.run()
        defer {
            kill(warming.processIdentifier, SIGKILL)
            warming.waitUntilExit()
        }
        try Loopback.waitUntilListening(warmingPort)
        let ready = try await ServerProcess(["--threads", "1"])
        defer { _ = ready.stop() }
        let nginx = try NginxProcess(upstreams: [warmingPort, ready.base.port ?? 0], folder: folder.url.path)
        defer { nginx.stop() }
        let report = try load(nginx.url("/v1/models/mobilenet-v2-1.0-224-uint8/classify"), clients: 2, seconds: 2)
        #expect(errors(report) == 0, "\(report)")
        #expect((report["ok"] as? Int ?? 0) > 5, "\(report)")
    }
}
