import Foundation
import NetRunnerTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension ServeCommandTests {
    /// `netrunner serve` under hostile clients, against its OpenAPI document (schemathesis), and
    /// with a full queue and SIGTERM. Nested in `ServeCommandTests`, whose `.serialized` it shares.
    @Suite("netrunner serve: hostile clients, the OpenAPI document, back-pressure")
    struct Robustness {
        @Test("Broken and hostile clients: hang-ups, slowloris, 10,000 bad bodies; good requests still answered")
        func faults() async throws {
            let python = Fixtures.path(".venv-test/bin/python")
            try #require(FileManager.default.isExecutableFile(atPath: python), "run scripts/setup-test-python.sh")
            // The hostile clients and the good one share 127.0.0.1: no per-address cap here (it would
            // close the good client's connections too; RequestBoundsTests tests the cap).
            let server = try await ServerProcess(["--threads", "1", "--max-connections-per-address", "0"])
            defer { server.expectCleanStop("still stops cleanly:") }
            let run = try ProcessResult.run(
                python,
                [
                    Fixtures.path("tools/serve/fault_check.py"), server.base.absoluteString,
                    String(server.process.processIdentifier), ServeCommandTests.coffee,
                ])
            #expect(run.status == 0, "\(run.stderr.suffix(2000))")
            let line = try #require(run.stdout.split(separator: "\n").last)
            let report = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(report["bad_requests"] as? Int == 10_000)
            #expect(report["server_errors"] as? Int == 0, "\(report["statuses"] ?? "")")
            let good = report["good_answers"] as? [String: Int] ?? [:]
            #expect(good.keys.sorted() == ["espresso"], "every good request answered right: \(good)")
            #expect((good["espresso"] ?? 0) >= 10)
            let before = report["rss_kb_before"] as? Int ?? 0
            let after = report["rss_kb_after"] as? Int ?? .max
            // AddressSanitizer's quarantine keeps freed memory: resident memory says nothing there.
            if ProcessInfo.processInfo.environment["ASAN_OPTIONS"] == nil {
                #expect(after - before < 64 * 1024, "resident memory \(before) kB -> \(after) kB")
            }
        }

        @Test("The OpenAPI document at /openapi.json holds: schemathesis finds no 5xx and no response off the schema")
        func openAPI() async throws {
            let schemathesis = Fixtures.path(".venv-test/bin/schemathesis")
            try #require(FileManager.default.isExecutableFile(atPath: schemathesis), "run scripts/setup-test-python.sh")
            // An album and a stream, so their routes are reached with real data too.
            let folder = try TemporaryFolder(prefix: "netrunner-openapi")
            defer { folder.remove() }
            let clip = try VideoClips.faces(in: folder.url.path)
            try await LiveServer.serve([
                "--threads", "2", "--albums", Fixtures.path("Tests/Fixtures/Photos/test"), "--stream", "cam=" + clip,
            ]) { server in
                let document = try await server.request("/openapi.json")
                #expect(document.status == 200 && document.json["openapi"] as? String == "3.0.3")
                let wrongMethod = try await server.request("/v1/models", method: "DELETE")
                #expect(wrongMethod.status == 405 && wrongMethod.headers["allow"] == "GET")
                // Every check but "a schema-valid request is accepted": a binary body that is not an
                // image is rejected (400) by design, and a schema cannot say "a JPEG". Every operation
                // but Triton's unload, which takes models out of service (503 to what follows, by design).
                // Waited for on a thread of its own: the server it calls is in this process. Each
                // request may take 60 s (schemathesis's default is 10): on a loaded CI machine one
                // classify took longer, which is a slow answer, not the 5xx or the off-schema answer
                // this test looks for.
                let schema = server.base.absoluteString + "/openapi.json"
                let run = try await OffPool.run {
                    try ProcessResult.run(
                        schemathesis,
                        [
                            "run", schema, "--checks", "all", "--exclude-checks", "positive_data_acceptance",
                            "--exclude-operation-id", "unloadModel", "--max-examples", "25", "--seed", "20261123",
                            "--request-timeout", "60", "--no-color",
                        ], environment: ["SCHEMATHESIS_HOOKS": nil])
                }
                #expect(run.status == 0, "\(run.stdout.suffix(3000))")
                // Every generated case passed ("N generated, N passed"); warnings (imports are off on
                // this server: 403) are not failures.
                let summary = run.stdout.firstMatch(of: /(\d+) generated, (\d+) passed\n/)
                #expect(summary != nil && summary?.1 == summary?.2, "\(run.stdout.suffix(1500))")
                #expect(!run.stdout.contains("FAILURES") && !run.stdout.contains("❌"), "\(run.stdout.suffix(1500))")
            }
        }

        @Test("A full queue answers 503 with Retry-After at once; SIGTERM lets requests in flight finish")
        func backPressureAndShutdown() async throws {
            let server = try await ServerProcess(["--threads", "1", "--queue", "1"])
            let photo = try Data(
                contentsOf: URL(fileURLWithPath: Fixtures.path("Tests/Fixtures/Photos/test/chelsea.png")))
            let statuses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for _ in 0..<24 {
                    group.addTask {
                        let reply = try await server.request(
                            "/v1/models/\(ServeCommandTests.classifier)/classify", method: "POST", body: photo,
                            contentType: "image/png")
                        return (reply.status, reply.headers["retry-after"])
                    }
                }
                var all: [(Int, String?)] = []
                for try await status in group { all.append(status) }
                return all
            }
            #expect(statuses.allSatisfy { $0.0 == 200 || ($0.0 == 503 && $0.1 == "1") }, "\(statuses)")
            #expect(statuses.contains { $0.0 == 503 }, "24 at once on a queue of 1 must overflow")
            #expect(statuses.contains { $0.0 == 200 })

            // A request the server has read whole just before SIGTERM still gets its answer.
            let port = server.base.port ?? 0
            let last = try RawConnection(port: port)
            await last.send(
                "POST /v1/models/\(ServeCommandTests.classifier)/classify HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: image/png\r\n"
                    + "Content-Length: \(photo.count)\r\nConnection: close\r\n\r\n")
            await last.send([UInt8](photo))
            try await Eventually.wait(for: "the server reading the last request") {
                Loopback.hasRead(server.process.processIdentifier, port: port, from: last.localPort)
            }
            server.process.terminate()
            let answered = RawConnection.status(await last.readUntilClosed(timeout: .seconds(60)).bytes)
            #expect(answered == 200 || answered == 503, "\(String(describing: answered))")
            server.process.waitUntilExit()
            #expect(server.process.terminationStatus == 0)
        }
    }
}
