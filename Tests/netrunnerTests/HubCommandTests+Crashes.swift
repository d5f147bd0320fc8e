import Foundation
import NetRunnerTestSupport
import Testing

extension HubCommandTests {
    /// `netrunner hub` when machines fail: a pull killed mid-download and resumed, a flipped bit,
    /// four processes pulling at once, the hub killed mid-upload. Nested in `HubCommandTests`,
    /// whose `.serialized` it shares.
    @Suite("netrunner hub: killed pulls, concurrent pulls, a killed hub")
    struct Crashes {
        @Test(
            "kill -9 of a pull mid-download, then again: resumed, verified; a flipped bit is caught, nothing installed")
        func resumeAndIntegrity() async throws {
            try await Setup.with { setup in
                let zip = try setup.floatBundleZip()
                #expect(try await setup.netrunner(["hub", "push", zip, "--name", "float"]).status == 0)
                // 2 MB/s for 13 MB: killed mid-way, a partial file is left. The pull and its watch run
                // on a thread of their own (the hub in process answers on the cooperative pool).
                var environment = ProcessInfo.processInfo.environment
                for (key, value) in setup.environment { environment[key] = value }
                let (pullEnvironment, partialFolder) = (environment, setup.folder.path("cache/hub/partial"))
                try await OffPool.run {
                    let pull = Process()
                    pull.executableURL = URL(fileURLWithPath: Fixtures.netrunner)
                    pull.arguments = ["hub", "pull", "float", "--max-bytes-per-second", "2000000"]
                    pull.environment = pullEnvironment
                    pull.standardOutput = FileHandle.nullDevice
                    pull.standardError = FileHandle.nullDevice
                    try pull.run()
                    // Killed once 2 MB have arrived (however slowly the machine starts the pull), which
                    // at 2 MB/s leaves most of the file to come; after a minute, killed all the same
                    // (what it kept is checked below).
                    try? Eventually.waitBlocking(for: "2 MB of the pull") {
                        !pull.isRunning || TemporaryFolder.bytes(under: partialFolder) >= 2_000_000
                    }
                    kill(pull.processIdentifier, SIGKILL)
                    pull.waitUntilExit()
                }
                let partials = (try? FileManager.default.contentsOfDirectory(atPath: partialFolder)) ?? []
                let part = try #require(partials.first { $0.hasSuffix(".part") }, "\(partials)")
                let kept =
                    (try FileManager.default.attributesOfItem(atPath: partialFolder + "/" + part)[.size] as? Int) ?? 0
                #expect(kept > 1_000_000 && kept < 13_000_000, "\(kept) bytes kept")
                // The lock of the killed process is stale (its pid is gone): the rerun takes over and resumes.
                let again = try await setup.netrunner(["hub", "pull", "float"], token: nil)
                #expect(again.status == 0, "\(again.stderr)")
                let path = try #require(again.stdout.split(separator: "\n").last.map(String.init))
                #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(contentsOf: URL(fileURLWithPath: zip)))

                // Through a proxy that flips one bit: detected, not installed, the good copy untouched.
                let proxy = try await FlipProxy.start(hub: setup.hub.address)
                let damaged: ProcessResult
                do {
                    #expect(
                        try await setup.netrunner([
                            "hub", "push", Fixtures.path(HubCommandTests.tflite), "--name", "float",
                        ]).status
                            == 0)
                    damaged = try await setup.netrunner(
                        ["hub", "pull", "float@2", "--hub", "http://127.0.0.1:\(proxy.port)"], token: nil)
                } catch {
                    await proxy.stop()
                    throw error
                }
                await proxy.stop()
                #expect(damaged.status == 1)
                #expect(
                    damaged.stderr.contains("The download of float@2 is damaged: its SHA-256 is"), "\(damaged.stderr)")
                #expect(
                    !FileManager.default.fileExists(
                        atPath: setup.folder.path(
                            "cache/hub/blobs/sha256/f3594f132b91cffd0b45c85f33056564e98c4125c107ea964de7d5accf1dacae.tflite"
                        )))
                #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(contentsOf: URL(fileURLWithPath: zip)))
            }
        }

        /// tools/hub/flip_proxy.py in front of a hub: it flips one bit of what it forwards, and
        /// stops when its standard input closes. Started and stopped on a thread of its own.
        final class FlipProxy: @unchecked Sendable {
            private let process = Process()
            private let input = Pipe()
            /// The port it listens on.
            private(set) var port = ""

            static func start(hub address: String) async throws -> FlipProxy {
                try await OffPool.run {
                    let proxy = FlipProxy()
                    let output = Pipe()
                    proxy.process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                    proxy.process.arguments = ["python3", Fixtures.path("tools/hub/flip_proxy.py"), address]
                    proxy.process.standardOutput = output
                    proxy.process.standardInput = proxy.input
                    try proxy.process.run()
                    proxy.port = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
                        .trimmingCharacters(in: .whitespacesAndNewlines)
                    return proxy
                }
            }

            func stop() async {
                await OffPool.run {
                    try? self.input.fileHandleForWriting.close()
                    self.process.waitUntilExit()
                }
            }
        }

        @Test("Four processes pulling the same model at once share one download: one verified file, no leftovers")
        func concurrentPulls() async throws {
            try await Setup.with { setup in
                let zip = try setup.floatBundleZip()
                #expect(try await setup.netrunner(["hub", "push", zip, "--name", "float"]).status == 0)
                var environment = ProcessInfo.processInfo.environment
                for (key, value) in setup.environment { environment[key] = value }
                let given = environment
                // The four pulls, on a thread of their own: their statuses and their last lines.
                let results = try await OffPool.run {
                    let pulls = (0..<4).map { _ in
                        let pull = Process()
                        pull.executableURL = URL(fileURLWithPath: Fixtures.netrunner)
                        pull.arguments = ["hub", "pull", "float", "--max-bytes-per-second", "8000000"]
                        pull.environment = given
                        let output = Pipe()
                        pull.standardOutput = output
                        pull.standardError = FileHandle.nullDevice
                        return (pull, output)
                    }
                    for (pull, _) in pulls { try pull.run() }
                    return pulls.map { pull, output in
                        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                        pull.waitUntilExit()
                        return (pull.terminationStatus, text.split(separator: "\n").last.map(String.init))
                    }
                }
                var paths = Set<String>()
                for (status, last) in results {
                    #expect(status == 0)
                    if let last { paths.insert(last) }
                }
                #expect(paths.count == 1, "\(paths)")
                let path = try #require(paths.first)
                #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(contentsOf: URL(fileURLWithPath: zip)))
                let partial =
                    (try? FileManager.default.contentsOfDirectory(atPath: setup.folder.path("cache/hub/partial"))) ?? []
                #expect(partial.isEmpty, "\(partial)")
            }
        }

        @Test("The hub killed (-9) mid-upload: no half version; after a restart every published version is there")
        func crashMidUpload() async throws {
            // A hub process: SIGKILL is what this test is about.
            let folder = try TemporaryFolder(prefix: "netrunner-hub")
            defer { folder.remove() }
            let hub = try HubProcess(data: folder.path("data"))
            defer { hub.stop() }
            let data = try Fixtures.data(HubCommandTests.tflite)
            #expect(try await hub.request("/v1/models/m/versions", method: "POST", body: data).status == 201)
            try await hub.killMidUploadAndRestart(file: Fixtures.path(HubCommandTests.tflite), name: "m")
            let model = try await hub.request("/v1/models/m", key: nil)
            let versions =
                (try JSONSerialization.jsonObject(with: model.body) as? [String: Any])?["versions"] as? [[String: Any]]
            #expect(versions?.count == 1, "\(versions ?? [])")
            let uploads = (try? FileManager.default.contentsOfDirectory(atPath: folder.path("data/uploads"))) ?? []
            #expect(uploads.isEmpty)
            #expect(try await hub.request("/v1/models/m/versions", method: "POST", body: data).status == 201)
            let after = try await hub.request("/v1/models/m", key: nil)
            let numbers =
                ((try JSONSerialization.jsonObject(with: after.body) as? [String: Any])?["versions"] as? [[String: Any]])?
                .compactMap { $0["version"] as? Int }
            #expect(numbers == [1, 2])
        }
    }
}
