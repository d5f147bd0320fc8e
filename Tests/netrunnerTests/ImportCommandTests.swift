import Foundation
import NetRunnerTestSupport
import Testing

/// `netrunner import`: what a person types and reads, and what `evaluate` and `serve` then find.
@Suite("netrunner import")
struct ImportCommandTests {
    func netrunner(_ arguments: [String], in folder: TemporaryFolder) throws -> ProcessResult {
        try ProcessResult.run(Fixtures.netrunner, arguments, workingDirectory: folder.url.path)
    }

    @Test("A zipped bundle by URL lands in Models (the default), then classify and evaluate's folder find it")
    func byURL() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-import-cli")
        defer { folder.remove() }
        try FileManager.default.createDirectory(atPath: folder.path("site"), withIntermediateDirectories: true)
        let bundle = "Models/bundles/face_detection_short_range.tiobundle/"
        var files: [(String, Data)] = []
        for name in try FileManager.default.subpathsOfDirectory(atPath: Fixtures.path(bundle)).sorted() {
            var isFolder: ObjCBool = false
            let path = Fixtures.path(bundle + name)
            if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue {
                files.append(("face.tiobundle/" + name, try Fixtures.data(bundle + name)))
            }
        }
        try ZipFixture.zip(files).write(to: URL(fileURLWithPath: folder.path("site/face.tiobundle.zip")))
        let site = try FileServer(folder: folder.path("site"))
        defer { site.stop() }

        let first = try netrunner(["import", site.url("face.tiobundle.zip"), "--allow-private-imports"], in: folder)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(
            first.stdout.hasPrefix(
                "imported face-detection-short-range (\"Short Range Face Detection\", detector) into Models/face.tiobundle"
            ),
            "\(first.stdout)")
        #expect(first.stdout.contains("sha256 "))
        let detect = try netrunner(
            [
                "detect", "--model", "Models/face.tiobundle",
                Fixtures.path("Tests/Fixtures/Photos/faces/two_portraits.jpg"),
            ],
            in: folder)
        #expect(detect.status == 0 && detect.stdout.components(separatedBy: "  face  box").count == 3, "\(detect)")

        // Again: refused, exit 1, a message naming the id and the way out; the model untouched.
        let again = try netrunner(["import", site.url("face.tiobundle.zip"), "--allow-private-imports"], in: folder)
        #expect(again.status == 1)
        #expect(again.stderr.contains("already installed at Models/face.tiobundle; replace it explicitly (--replace)"))
        let replaced = try netrunner(
            ["import", site.url("face.tiobundle.zip"), "--replace", "--allow-private-imports"], in: folder)
        #expect(replaced.status == 0 && replaced.stdout.hasPrefix("replaced face-detection-short-range"))
    }

    @Test("A web page instead of a model: a clear error naming the URL, exit 1, nothing installed")
    func notAModel() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-import-cli")
        defer { folder.remove() }
        try FileManager.default.createDirectory(atPath: folder.path("site"), withIntermediateDirectories: true)
        try Data("<!doctype html><p>Please log in</p>".utf8).write(to: URL(fileURLWithPath: folder.path("site/m.zip")))
        let site = try FileServer(folder: folder.path("site"))
        defer { site.stop() }
        let run = try netrunner(
            ["import", site.url("m.zip"), "--models", "Mine", "--allow-private-imports"], in: folder)
        #expect(run.status == 1)
        #expect(run.stderr.contains("Cannot import \(site.url("m.zip")): it is an HTML page"), "\(run.stderr)")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: folder.path("Mine"))) ?? []).isEmpty)
    }

    /// A folder with a site serving the float MobileNet as `m.tflite`, and the site.
    func siteWithModel() throws -> (TemporaryFolder, FileServer) {
        let folder = try TemporaryFolder(prefix: "netrunner-import-cli")
        try FileManager.default.createDirectory(atPath: folder.path("site"), withIntermediateDirectories: true)
        try Fixtures.data("Models/mobilenet_v2_1.0_224_uint8_metadata.tflite")
            .write(to: URL(fileURLWithPath: folder.path("site/m.tflite")))
        return (folder, try FileServer(folder: folder.path("site")))
    }

    @Test("Loopback URLs, however written, are refused without --allow-private-imports; with it they import")
    func privateHosts() throws {
        let (folder, site) = try siteWithModel()
        defer {
            site.stop()
            folder.remove()
        }
        for url in [
            site.url("m.tflite"), "http://[::ffff:127.0.0.1]:\(site.port)/m.tflite",
            "http://2130706433:\(site.port)/m.tflite", "http://localhost:\(site.port)/m.tflite",
        ] {
            let run = try netrunner(["import", url], in: folder)
            #expect(run.status == 1, "\(url): \(run.stdout)")
            #expect(run.stderr.contains("Cannot import \(url): its host"), "\(run.stderr)")
            #expect(run.stderr.contains("is a loopback address"), "\(run.stderr)")
            #expect(run.stderr.contains("--allow-private-imports allows them"), "\(run.stderr)")
        }
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: folder.path("Models"))) ?? []).isEmpty)
        let allowed = try netrunner(["import", site.url("m.tflite"), "--allow-private-imports"], in: folder)
        #expect(allowed.status == 0 && allowed.stdout.hasPrefix("imported m "), "\(allowed.stderr)")
    }

    @Test("A URL's password is in no message of import, nor in serve's import list, errors or log")
    func credentialsMasked() async throws {
        let (folder, site) = try siteWithModel()
        defer {
            site.stop()
            folder.remove()
        }
        for url in [
            "http://admin:hunter2@127.0.0.1:\(site.port)/nothing.zip", "http://admin:hunter2@127.0.0.1:9/m.zip",
        ] {
            let run = try netrunner(["import", url, "--allow-private-imports"], in: folder)
            #expect(run.status == 1)
            #expect(!run.stderr.contains("hunter2") && run.stderr.contains("http://***@127.0.0.1:"), "\(run.stderr)")
        }
        let refused = try netrunner(["import", "http://admin:hunter2@127.0.0.1:\(site.port)/m.tflite"], in: folder)
        #expect(refused.status == 1 && !refused.stderr.contains("hunter2"), "\(refused.stderr)")

        // serve in process: every logger of its routes and jobs is the server's, captured whole
        // (the import's HTTP client logs nothing), so the log checked is all serve logged.
        try await LiveServer.serve(
            ["--threads", "1", "--allow-private-imports", "--verbose"], models: folder.path("Models")
        ) { server in
            let started = try await server.request(
                "/v1/imports", method: "POST",
                body: Data(#"{"url": "http://admin:hunter2@127.0.0.1:\#(site.port)/nothing.zip"}"#.utf8),
                contentType: "application/json")
            #expect(started.status == 202)
            #expect(!String(decoding: started.body, as: UTF8.self).contains("hunter2"))
            let id = try #require(started.json["id"] as? String)
            var job: [String: Any] = [:]
            // Up to 30 s for the import to fail; what it says then is checked below, failed or not.
            do {
                try await Eventually.wait(for: "the import failed", upTo: .seconds(30), every: .milliseconds(50)) {
                    job = try await server.request("/v1/imports/\(id)").json
                    return job["state"] as? String == "failed"
                }
            } catch is Eventually.Timeout {}
            #expect(job["source"] as? String == "http://***@127.0.0.1:\(site.port)/nothing.zip", "\(job)")
            #expect((job["error"] as? String)?.contains("the server answered 404") == true, "\(job)")
            let list = try await server.request("/v1/imports")
            #expect(list.status == 200 && !String(decoding: list.body, as: UTF8.self).contains("hunter2"))
            #expect(server.logIsWhole, "the log checked is not all the server logged")
            #expect(!server.log.contains("hunter2"), "\(server.log)")
        }
    }

    @Test("serve refuses imports from loopback hosts with a 400 naming the address, unless --allow-private-imports")
    func serveRefusesPrivateHosts() async throws {
        let (folder, site) = try siteWithModel()
        defer {
            site.stop()
            folder.remove()
        }
        try await LiveServer.serve(["--threads", "1"], models: folder.path("Models")) { server in
            for url in [
                site.url("m.tflite"), "http://[::ffff:127.0.0.1]:\(site.port)/m.tflite",
                "http://2130706433:\(site.port)/m.tflite", "http://169.254.169.254/latest/meta-data/",
            ] {
                let answer = try await server.request(
                    "/v1/imports", method: "POST", body: Data(#"{"url": "\#(url)"}"#.utf8), contentType: "text/plain")
                #expect(answer.status == 400, "\(url): \(answer.json)")
                let message = answer.json["error_description"] as? String ?? ""
                #expect(message.contains("Cannot import \(url): its host"), "\(message)")
                #expect(message.contains("--allow-private-imports"), "\(message)")
            }
            let list = try await server.request("/v1/imports").json
            #expect((list["imports"] as? [Any])?.isEmpty == true, "\(list)")
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: folder.path("Models"))) ?? []).isEmpty)
        }
    }

    @Test(
        "Staging folders that a killed import left are removed when import or serve starts; a live process's are kept")
    func abandonedStaging() async throws {
        let folder = try TemporaryFolder(prefix: "netrunner-import-cli")
        defer { folder.remove() }
        var name = [CChar](repeating: 0, count: 256)
        gethostname(&name, name.count - 1)
        let host = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let running = Process()
        running.executableURL = URL(fileURLWithPath: "/bin/sleep")
        running.arguments = ["120"]
        try running.run()
        defer { kill(running.processIdentifier, SIGKILL) }
        let dead = ".netrunner-import-\(host)-\(StagingFolderPID.neverAlive)-abcdef"
        let live = ".netrunner-import-\(host)-\(running.processIdentifier)-ghijkl"
        func leave(_ names: [String], in models: String) throws {
            for staged in names {
                try FileManager.default.createDirectory(
                    atPath: models + "/" + staged + "/unpacked", withIntermediateDirectories: true)
                try Data(count: 65536).write(to: URL(fileURLWithPath: models + "/" + staged + "/download"))
            }
        }
        func left(_ models: String) -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: models)) ?? []).sorted()
        }
        // `import` (even one that fails) cleans the folder it imports into.
        try leave([dead, live], in: folder.path("Models"))
        let run = try netrunner(["import", "no-such.zip"], in: folder)
        #expect(run.status == 1)
        #expect(left(folder.path("Models")) == [live])
        // `serve` cleans its models folder at start.
        try leave([dead], in: folder.path("Served"))
        try leave([live], in: folder.path("Served"))
        try await LiveServer.serve(["--threads", "1"], models: folder.path("Served")) { _ in }
        #expect(left(folder.path("Served")) == [live])
    }
}
