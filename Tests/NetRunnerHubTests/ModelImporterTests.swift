import Foundation
import NetRunner
import NetRunnerSupport
import NetRunnerTestSupport
import Synchronization
import Testing

@testable import NetRunnerHub

/// Net Runner's import by URL: real downloads from a loopback server, real bundles and photos,
/// hostile inputs refused with the models folder left as it was.
@Suite("Importing models by URL or path", .serialized)
struct ModelImporterTests {
    /// A site to download from and an empty models folder.
    final class Setup {
        let folder: TemporaryFolder
        let server: FileServer
        var site: String { folder.path("site") }
        var models: String { folder.path("Models") }

        init() throws {
            folder = try TemporaryFolder(prefix: "netrunner-import")
            try FileManager.default.createDirectory(atPath: folder.path("site"), withIntermediateDirectories: true)
            server = try FileServer(folder: folder.path("site"))
        }

        @discardableResult
        func publish(_ data: Data, as name: String) throws -> String {
            try data.write(to: URL(fileURLWithPath: site + "/" + name))
            return server.url(name)
        }

        /// What a person sees in the models folder (hidden staging folders included, to check
        /// none is left behind).
        func installed() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: models)) ?? []).sorted()
        }

        deinit {
            server.stop()
            folder.remove()
        }
    }

    /// The uint8 MobileNetV2 bundle of the fixtures, zipped.
    static func zippedBundle(id: String? = nil, folder: String = "m.tfbundle") throws -> Data {
        let bundle = "Tests/Fixtures/Bundles/mobilenet_v2_1.0_224_uint8.tfbundle/"
        var json = try String(decoding: Fixtures.data(bundle + "model.json"), as: UTF8.self)
        if let id { json = json.replacingOccurrences(of: "\"mobilenet-v2-100-224-uint8\"", with: "\"\(id)\"") }
        return ZipFixture.zip([
            ("\(folder)/model.json", Data(json.utf8)),
            (
                "\(folder)/mobilenet_v2_1.0_224_uint8.tflite",
                try Fixtures.data(bundle + "mobilenet_v2_1.0_224_uint8.tflite")
            ),
            ("\(folder)/assets/labels.txt", try Fixtures.data(bundle + "assets/labels.txt")),
        ])
    }

    /// SHA-256 by coreutils, independent of our digest code.
    static func sha256sum(_ path: String) throws -> String {
        let process = Process()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sha256sum", path]
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return String(text.prefix(64))
    }

    @Test("A zipped bundle by URL (through a redirect) is installed, verified and classifies a real photo")
    func zippedBundleByURL() async throws {
        let setup = try Setup()
        try setup.publish(try Self.zippedBundle(), as: "m.tfbundle.zip")
        let events = Mutex<[ImportProgress]>([])
        let model = try await ModelImporter(modelsFolder: setup.models, allowsPrivateAddresses: true).importModel(
            from: setup.server.url("redirect/m.tfbundle.zip")
        ) { event in events.withLock { $0.append(event) } }
        #expect(model.id == "mobilenet-v2-100-224-uint8")
        #expect(model.kind == .classification)
        #expect(model.path == setup.models + "/m.tfbundle")
        #expect(!model.replaced)
        #expect(model.sha256 == (try Self.sha256sum(setup.site + "/m.tfbundle.zip")))
        #expect(setup.installed() == ["m.tfbundle"])
        let size = try Data(contentsOf: URL(fileURLWithPath: setup.site + "/m.tfbundle.zip")).count
        #expect(model.byteCount == size)
        let seen = events.withLock { $0 }
        #expect(seen.first == .downloading(received: 0, total: size))
        #expect(seen.contains(.downloading(received: size, total: size)))
        #expect(Array(seen.suffix(3)) == [.unpacking, .validating, .installing])
        // Found as evaluate and serve find models, and it runs.
        #expect(try ModelDirectory(path: setup.models).models[model.id] == model.path)
        let classifier = try ImageClassifier(model: try LoadedModel(.path(model.path)))
        let result = try classifier.classify(fileAt: Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg"))
        #expect(result.categories.first?.displayName == "espresso")
    }

    @Test(
        "A download goes on while every cooperative thread is busy: the read timeout counts only the server's silence")
    func downloadWhileThreadsAreBusy() async throws {
        let setup = try Setup()
        let zip = try Self.zippedBundle()
        try setup.publish(zip, as: "m.tfbundle.zip")
        let target = setup.folder.path("download")
        let url = setup.server.url("slow/m.tfbundle.zip")
        // Bytes received so far, as the download reports them (from the client's event loop).
        let received = Shared()
        let total = zip.count
        async let outcome = HTTPDownload.download(
            url, to: target, limit: 1 << 30, addresses: AddressCheck(allowsPrivate: true),
            progress: { count, _ in received.bytes.store(count, ordering: .relaxed) }, readTimeout: .seconds(1))
        try await Eventually.wait(for: "the download's first bytes") { received.bytes.load(ordering: .relaxed) > 0 }
        // Every cooperative thread held until the whole body has arrived (or 20 s): with the old
        // loop nothing more was read meanwhile, and the 1 s read timeout ended the download.
        let threads = ProcessInfo.processInfo.activeProcessorCount
        let held = Shared()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<threads {
                group.addTask {
                    // Blocking on purpose: the thread is held, not given back to the pool.
                    try? Eventually.waitBlocking(for: "the whole body", upTo: .seconds(20), every: .milliseconds(10)) {
                        received.bytes.load(ordering: .relaxed) == total
                    }
                    if received.bytes.load(ordering: .relaxed) == total { held.bytes.store(total, ordering: .relaxed) }
                }
            }
        }
        #expect(held.bytes.load(ordering: .relaxed) == total, "the body stopped while the threads were held")
        let result = try await outcome
        #expect(result.byteCount == zip.count)
        #expect(result.sha256 == (try Self.sha256sum(setup.site + "/m.tfbundle.zip")))
    }

    @Test("A .tflite by URL and a bundle folder by path are installed; a second import of an id needs replace")
    func tfliteAndFolder() async throws {
        let setup = try Setup()
        let url = try setup.publish(
            try Fixtures.data("Models/mobilenet_v2_1.0_224_uint8_metadata.tflite"), as: "mobilenet.tflite")
        let importer = ModelImporter(modelsFolder: setup.models, allowsPrivateAddresses: true)
        let model = try await importer.importModel(from: url)
        #expect(model.id == "mobilenet")
        #expect(model.path == setup.models + "/mobilenet.tflite")
        #expect(
            model.sha256 == (try Self.sha256sum(Fixtures.path("Models/mobilenet_v2_1.0_224_uint8_metadata.tflite"))))

        let folder = Fixtures.path("Models/bundles/face_detection_short_range.tiobundle")
        let face = try await importer.importModel(from: folder)
        #expect(face.kind == .detection)
        #expect(face.id == "face-detection-short-range")
        #expect(setup.installed() == ["face_detection_short_range.tiobundle", "mobilenet.tflite"])

        // The same id again: refused, nothing changed; with replace: replaced in place.
        let before = try Self.sha256sum(setup.models + "/mobilenet.tflite")
        await #expect(throws: ImportError.alreadyInstalled(id: "mobilenet", path: setup.models + "/mobilenet.tflite")) {
            try await importer.importModel(from: url)
        }
        #expect(setup.installed() == ["face_detection_short_range.tiobundle", "mobilenet.tflite"])
        let again = try await importer.importModel(from: url, sha256: model.sha256.uppercased(), replace: true)
        #expect(again.replaced)
        #expect(try Self.sha256sum(setup.models + "/mobilenet.tflite") == before)
        #expect(setup.installed() == ["face_detection_short_range.tiobundle", "mobilenet.tflite"])
    }

    @Test("A photo instead of a model is named by its format, whichever of the decoded ones")
    func photoNamed() throws {
        for (file, named) in [
            ("Tests/Fixtures/Photos/test/chelsea.png", "a PNG image"),
            ("Tests/Fixtures/Formats/heic_plain.heic", "a HEIC image"),
            ("Tests/Fixtures/Formats/avif_plain.avif", "an AVIF image"),
            ("Tests/Fixtures/Formats/webp_lossy.webp", "a WebP image"),
            ("Tests/Fixtures/Formats/tiff_rgb_lzw.tif", "a TIFF image"),
            ("Tests/Fixtures/Formats/gif_palette.gif", "a GIF image"),
        ] {
            guard case .other(let looksLike) = ModelImporter.sniff(Fixtures.path(file)) else {
                Issue.record("\(file) was taken for a model")
                continue
            }
            #expect(looksLike == named, "\(file)")
        }
    }

    /// Each hostile source, and what the import must say.
    static let hostile: [String] = [
        "html", "escape", "absolute", "symlink", "two-bundles", "declared-bomb", "non-image", "truncated-model",
        "sha-mismatch", "404", "huge-content-length", "cut-short", "refused", "ftp", "missing", "too-large",
        "folder-not-bundle", "bad-description",
    ]

    @Test("Hostile sources are refused with a message naming them; the models folder stays empty", arguments: hostile)
    func refused(kind: String) async throws {
        let setup = try Setup()
        let json = Data(#"{"name": "x"}"#.utf8)
        let model = try Fixtures.data("Models/mobilenet_v2_1.0_224_uint8_metadata.tflite")
        var importer = ModelImporter(modelsFolder: setup.models, allowsPrivateAddresses: true)
        var sha256: String?
        let source: String
        let expected: String
        switch kind {
        case "html":
            source = try setup.publish(Data("<!DOCTYPE html><html>Sign in</html>".utf8), as: "model.zip")
            expected = "it is an HTML page"
        case "escape":
            source = try setup.publish(
                ZipFixture.zip([("x.tiobundle/model.json", json), ("../evil.txt", json)]), as: "x.zip")
            expected = "evil.txt"
        case "absolute":
            source = try setup.publish(
                ZipFixture.zip([("x.tiobundle/model.json", json), ("/tmp/evil.txt", json)]), as: "x.zip")
            expected = "/tmp/evil.txt"
        case "symlink":
            source = try setup.publish(
                ZipFixture.zip([("x.tiobundle/model.json", json)], attributes: 0o120777 << 16), as: "x.zip")
            expected = "link"
        case "two-bundles":
            source = try setup.publish(
                ZipFixture.zip([("a.tiobundle/model.json", json), ("b.tiobundle/model.json", json)]), as: "x.zip")
            expected = "it holds 2 model.json files"
        case "declared-bomb":
            var zip = [UInt8](ZipFixture.zip([("x.tiobundle/model.json", Data("{}".utf8))]))
            let central = try #require(
                zip.indices.first { zip[$0] == 0x50 && zip[$0 + 1] == 0x4B && zip[$0 + 2] == 1 && zip[$0 + 3] == 2 })
            for offset in [20, 24] {
                zip.replaceSubrange((central + offset)..<(central + offset + 4), with: [0, 0, 0, 0x80])
            }
            source = try setup.publish(Data(zip), as: "bomb.zip")
            expected = "beyond the size limit"
        case "non-image":
            source = try setup.publish(try Fixtures.data("Tests/Fixtures/Models/multi_io.tflite"), as: "multi.tflite")
            expected = "Cannot import"
        case "truncated-model":
            source = try setup.publish(model.prefix(model.count / 3), as: "cut.tflite")
            expected = "Cannot import"
        case "sha-mismatch":
            source = try setup.publish(model, as: "m.tflite")
            sha256 = String(repeating: "0", count: 64)
            expected = "not the expected 0000"
        case "404":
            source = setup.server.url("nothing.zip")
            expected = "the server answered 404"
        case "huge-content-length":
            source = setup.server.url("huge")
            expected = "larger than the limit"
        case "cut-short":
            try setup.publish(model, as: "m.tflite")
            source = setup.server.url("short/m.tflite")
            expected = "Cannot download"
        case "refused":
            source = "http://127.0.0.1:9/model.zip"
            expected = "refused"
        case "ftp":
            source = "ftp://example.org/model.zip"
            expected = "only http:// and https:// URLs"
        case "missing":
            source = setup.folder.path("no-such.zip")
            expected = "no such file or folder"
        case "too-large":
            source = try setup.publish(model, as: "m.tflite")
            importer.maximumBytes = 1000
            expected = "larger than the limit of 1000 bytes"
        case "folder-not-bundle":
            source = setup.site
            expected = "a folder without a model.json"
        default:  // bad-description
            source = try setup.publish(
                ZipFixture.zip([
                    ("x.tiobundle/model.json", Data(#"{"name": "x", "id": "x", "model": {"file": "m.tflite"}}"#.utf8)),
                    ("x.tiobundle/m.tflite", model),
                ]), as: "x.zip")
            expected = "Cannot import"
        }
        await #expect {
            try await importer.importModel(from: source, sha256: sha256)
        } throws: { error in
            let text = "\(error)"
            let named = text.contains(source) || kind == "escape" || kind == "absolute" || kind == "symlink"
            if !(error is ImportError) || !text.contains(expected) || !named {
                Issue.record("\(kind): \(text)")
                return false
            }
            return true
        }
        #expect(setup.installed().allSatisfy { $0.hasPrefix(".") == false } && setup.installed().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: setup.folder.path("evil.txt")))
        #expect(!FileManager.default.fileExists(atPath: setup.models + "/../evil.txt"))
    }

    /// A loopback server that answers every request with a redirect to `target`.
    final class Redirector {
        private let process = Process()
        let port: Int
        var url: String { "http://127.0.0.1:\(port)/m.tflite" }

        init(to target: String) throws {
            let output = Pipe()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [
                "python3", "-c",
                """
                import http.server, sys
                class H(http.server.BaseHTTPRequestHandler):
                    def do_GET(self):
                        self.send_response(302); self.send_header("Location", sys.argv[1])
                        self.send_header("Content-Length", "0"); self.end_headers()
                    def log_message(self, *a): pass
                s = http.server.HTTPServer(("127.0.0.1", 0), H)
                print(s.server_address[1], flush=True)
                s.serve_forever()
                """,
                target,
            ]
            process.standardOutput = output
            try process.run()
            let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
            port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        }

        deinit {
            // SIGKILL: a child started from a test thread may have SIGTERM blocked.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    @Test(
        "Loopback, private, link-local and other non-public hosts are refused before any connection, however written",
        arguments: [
            "http://127.0.0.1:PORT/m.tflite", "http://[::ffff:127.0.0.1]:PORT/m.tflite",
            "http://2130706433:PORT/m.tflite",
            "http://0177.0.0.1:PORT/m.tflite", "http://0x7f000001:PORT/m.tflite", "http://localhost:PORT/m.tflite",
            "http://[::1]:PORT/m.tflite", "http://0.0.0.0:PORT/m.tflite", "http://[::]:PORT/m.tflite",
            "http://10.1.2.3/m.tflite", "http://172.16.0.1/m.tflite", "http://192.168.1.1/m.tflite",
            "http://169.254.169.254/latest/meta-data", "http://100.64.0.1/m.tflite", "http://224.0.0.1/m.tflite",
            "http://255.255.255.255/m.tflite", "http://[fe80::1]/m.tflite", "http://[fd00::1]/m.tflite",
            "http://[::ffff:10.0.0.1]/m.tflite", "http://[::ffff:169.254.169.254]/m.tflite",
            "http://[64:ff9b::7f00:1]/m.tflite", "http://[2002:7f00:1::]/m.tflite", "http://[ff02::1]/m.tflite",
        ])
    func privateHostsRefused(template: String) async throws {
        let setup = try Setup()
        try setup.publish(try Fixtures.data("Models/mobilenet_v2_1.0_224_uint8_metadata.tflite"), as: "m.tflite")
        let url = template.replacingOccurrences(of: "PORT", with: "\(setup.server.port)")
        let importer = ModelImporter(modelsFolder: setup.models)
        for attempt in 0..<2 {
            await #expect {
                if attempt == 0 {
                    _ = try await importer.importModel(from: url)
                } else {
                    try await importer.checkAddress(of: url)
                }
            } throws: { error in
                let text = "\(error)"
                guard case .badSource = error as? ImportError, text.contains("--allow-private-imports"),
                    text.hasPrefix("Cannot import \(url): its host")
                else {
                    Issue.record("\(url): \(text)")
                    return false
                }
                return true
            }
        }
        #expect(setup.installed().isEmpty)
    }

    @Test("A redirect to a loopback address is refused (each redirect is checked); allowed, the same import installs")
    func redirectToLoopbackRefused() async throws {
        let setup = try Setup()
        try setup.publish(try Fixtures.data("Models/mobilenet_v2_1.0_224_uint8_metadata.tflite"), as: "m.tflite")
        // The first server stands for a public one; it sends the import on to loopback by name.
        let target = "http://localhost:\(setup.server.port)/m.tflite"
        let redirector = try Redirector(to: target)
        var importer = ModelImporter(modelsFolder: setup.models)
        importer.publicHosts = ["127.0.0.1"]
        await #expect {
            try await importer.importModel(from: redirector.url)
        } throws: { error in
            let text = "\(error)"
            let expected =
                "Cannot import \(redirector.url): it redirects to \(target), whose host localhost (127.0.0.1) is a loopback address"
            if !text.hasPrefix(expected) || !text.contains("--allow-private-imports") {
                Issue.record("\(text)")
                return false
            }
            return true
        }
        #expect(setup.installed().isEmpty)
        // Not a redirect to another scheme either, and not a circle.
        let toFile = try Redirector(to: "file:///etc/passwd")
        await #expect {
            try await importer.importModel(from: toFile.url)
        } throws: { error in
            "\(error)".contains("it redirects to file:///etc/passwd, not an http(s) URL")
        }
        importer.allowsPrivateAddresses = true
        let model = try await importer.importModel(from: redirector.url)
        #expect(model.id == "m" && setup.installed() == ["m.tflite"])
    }

    @Test("A URL's user and password appear in no message")
    func credentialsMasked() async throws {
        let setup = try Setup()
        let importer = ModelImporter(modelsFolder: setup.models, allowsPrivateAddresses: true)
        let port = setup.server.port
        for url in [
            "http://admin:hunter2@127.0.0.1:\(port)/nothing.zip", "http://admin:hunter2@127.0.0.1:9/m.zip",
            "http://admin:hunter2@[::1]:9/m.zip",
        ] {
            await #expect {
                try await importer.importModel(from: url)
            } throws: { error in
                let text = "\(error)"
                if text.contains("hunter2") || !text.contains("http://***@") {
                    Issue.record("\(text)")
                    return false
                }
                return true
            }
        }
        let refused = ModelImporter(modelsFolder: setup.models)
        await #expect {
            try await refused.checkAddress(of: "http://admin:hunter2@127.0.0.1/m.zip")
        } throws: { error in
            !"\(error)".contains("hunter2") && "\(error)".contains("http://***@127.0.0.1/m.zip")
        }
    }

    @Test("URLCredentials masks the user information of every URL in a text, and nothing else")
    func maskingText() {
        let cases: [(String, String)] = [
            (
                "rtsp://admin:hunter2@10.0.0.5:554/live: Connection refused",
                "rtsp://***@10.0.0.5:554/live: Connection refused"
            ),
            ("http://user@host/a", "http://***@host/a"),
            ("see http://a:b@h/x and rtmp://c:d@i/y.", "see http://***@h/x and rtmp://***@i/y."),
            ("http://admin:pa/ss@host/x", "http://***@host/x"),
            ("http://host/users/@me", "http://host/users/@me"),
            (
                "[tcp @ 0x55d0] Connection to tcp://127.0.0.1:1 failed",
                "[tcp @ 0x55d0] Connection to tcp://127.0.0.1:1 failed"
            ),
            ("'http://u:p@h/'", "'http://***@h/'"),
            ("no url at all @ here", "no url at all @ here"),
            ("http://u:p@h@evil/x", "http://***@evil/x"),
        ]
        for (text, expected) in cases {
            #expect(URLCredentials.masked(text) == expected, "\(text)")
        }
    }

    @Test("Staging folders of a process that is gone are removed at start; a live process's are kept")
    func abandonedStagingFolders() async throws {
        let setup = try Setup()
        try FileManager.default.createDirectory(atPath: setup.models, withIntermediateDirectories: true)
        let host = StagingFolder.host
        let (dead, live) = try Self.deadAndLiveProcesses()
        defer { kill(live, SIGKILL) }
        let names = [
            ".netrunner-import-\(host)-\(dead)-abcdef", ".netrunner-import-\(host)-\(live)-ghijkl",
            ".netrunner-import-other-machine-\(dead)-mnopqr",
        ]
        for name in names {
            try FileManager.default.createDirectory(
                atPath: setup.models + "/" + name + "/unpacked", withIntermediateDirectories: true)
            try Data(count: 4096).write(to: URL(fileURLWithPath: setup.models + "/" + name + "/download"))
        }
        // A failing import starts with the clean-up as any other.
        await #expect(throws: ImportError.self) {
            try await ModelImporter(modelsFolder: setup.models).importModel(from: setup.folder.path("none.zip"))
        }
        #expect(setup.installed() == names.dropFirst().sorted())
        #expect(
            StagingFolder.owner(of: names[0])?.pid == dead && StagingFolder.owner(of: names[2])?.host == "other-machine"
        )
    }

    /// A pid no process can have, and the pid of one that runs (`sleep`; kill it).
    ///
    /// Not an ended process's pid: on a machine spawning hundreds of processes (the whole suite in
    /// parallel) such a pid can be given to another process before the check.
    static func deadAndLiveProcesses() throws -> (dead: Int32, live: Int32) {
        let running = Process()
        running.executableURL = URL(fileURLWithPath: "/bin/sleep")
        running.arguments = ["60"]
        try running.run()
        return (StagingFolderPID.neverAlive, running.processIdentifier)
    }
}

/// A count several tasks and the HTTP client's event loop read and write.
private final class Shared: Sendable {
    let bytes = Atomic<Int>(0)
}
