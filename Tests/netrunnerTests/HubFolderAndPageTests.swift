import Foundation
import NetRunnerTestSupport
import Testing

/// The hub as a newcomer meets it (issue 25, section 3): a bundle folder pushed as it is, and
/// the hub's own page in a browser.
@Suite("netrunner hub: a folder pushed, the hub's page", .serialized)
struct HubFolderAndPageTests {
    static let bundleFolder = "Tests/Fixtures/Bundles/mobilenet_v2_1.0_224_float32.tiobundle"
    static let coffee = Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")

    /// The lines after classify's header: the answers.
    static func answers(_ text: String) -> [String] {
        text.split(separator: "\n").dropFirst().map(String.init)
    }

    @Test(
        "A bundle folder is pushed zipped on the fly (nothing left in TMPDIR), pulled, and answers as the folder does")
    func pushFolder() throws {
        let setup = try HubCommandTests.ProcessSetup()
        let temporary = setup.folder.path("tmp")
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        let folder = Fixtures.path(Self.bundleFolder)
        let before = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        var environment = setup.environment
        environment["NETRUNNER_HUB_TOKEN"] = HubProcess.adminKey
        environment["TMPDIR"] = temporary
        let pushed = try ProcessResult.run(
            Fixtures.netrunner, ["hub", "push", folder, "--name", "mine", "--alias", "production"],
            environment: environment)
        #expect(pushed.status == 0, "\(pushed.stderr)")
        #expect(pushed.stdout.hasPrefix("published mine@1 (sha256 "), "\(pushed.stdout)")
        #expect(pushed.stdout.contains("classification); production -> 1"), "\(pushed.stdout)")
        // Streamed: no zip beside the folder, none in TMPDIR.
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == before)

        let pulled = try setup.netrunner(["hub", "pull", "mine"], token: nil)
        #expect(pulled.status == 0 && pulled.stdout.hasPrefix("mine@1 sha256 "), "\(pulled)")
        let viaHub = try setup.netrunner(["classify", "--model", "hub:mine", Self.coffee], token: nil)
        let direct = try ProcessResult.run(Fixtures.netrunner, ["classify", "--model", folder, Self.coffee])
        #expect(viaHub.status == 0, "\(viaHub.stderr)")
        #expect(Self.answers(viaHub.stdout) == Self.answers(direct.stdout), "\(viaHub.stdout)\n\(direct.stdout)")
        #expect(Self.answers(direct.stdout).first?.contains("espresso") == true, "\(direct.stdout)")

        // The same bytes pushed again are the same digest (a deterministic zip).
        let again = try ProcessResult.run(
            Fixtures.netrunner, ["hub", "push", folder, "--name", "mine"], environment: environment)
        let digest = { (text: String) in text.components(separatedBy: "sha256 ").dropFirst().first?.prefix(12) }
        #expect(again.status == 0 && digest(again.stdout) == digest(pushed.stdout), "\(again)")

        // What cannot be pushed says so once: read (not write), one full stop.
        let missing = try setup.netrunner(["hub", "push", setup.folder.path("none.tiobundle"), "--name", "x"])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("Cannot read \(setup.folder.path("none.tiobundle")): "), "\(missing.stderr)")
        #expect(!missing.stderr.contains("Cannot write") && !missing.stderr.contains(".."), "\(missing.stderr)")
        let empty = setup.folder.path("empty.tiobundle")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let nothing = try setup.netrunner(["hub", "push", empty, "--name", "x"])
        #expect(nothing.status != 0)
        #expect(nothing.stderr.contains("holds no files"), "\(nothing.stderr)")
        #expect(!nothing.stderr.contains(".."), "\(nothing.stderr)")
    }

    @Test("GET / is the hub's page: one HTML file fetching the JSON routes, the key sent as a header")
    func page() async throws {
        let setup = try HubCommandTests.ProcessSetup()
        let (status, headers, body) = try await setup.hub.request("/", key: nil)
        #expect(status == 200)
        #expect(headers["content-type"]?.hasPrefix("text/html") == true, "\(headers)")
        let html = String(decoding: body, as: UTF8.self)
        #expect(html.hasPrefix("<!doctype html>"))
        for part in [
            "<title>NetRunner hub</title>", "id=\"models\"", "id=\"model\"", "id=\"key\"", "/v1/models",
            "/adoption", "/history", "Authorization", "Bearer ",
        ] {
            #expect(html.contains(part), "the page lacks \(part)")
        }
        // Every string from the hub goes in as text; nothing is fetched from elsewhere.
        #expect(!html.contains("innerHTML") && !html.contains("insertAdjacentHTML") && !html.contains("eval("))
        #expect(!html.contains("http://") && !html.contains("https://"))
        #expect(headers["content-security-policy"]?.contains("default-src 'none'") == true, "\(headers)")
        // The page from a private hub too (its data needs the key, the page does not).
        let (head, _, _) = try await setup.hub.request("/", method: "HEAD", key: nil)
        #expect(head == 200)
        let (post, postHeaders, _) = try await setup.hub.request("/", method: "POST", key: nil)
        #expect(post == 405 && postHeaders["allow"] == "GET, HEAD", "\(post) \(postHeaders)")
    }

    @Test("The hub's page in Chromium: models, versions, aliases with history and weights, adoption")
    func pageInBrowser() async throws {
        let python = try BrowserPage.python()
        let setup = try HubCommandTests.ProcessSetup(["--private"])
        // A bundle whose description is markup: the page shows it as text.
        let odd = setup.folder.path("odd.tiobundle")
        try FileManager.default.copyItem(atPath: Fixtures.path(Self.bundleFolder), toPath: odd)
        let description = try String(contentsOfFile: odd + "/model.json", encoding: .utf8)
        try description.replacingOccurrences(of: "\"MobileNet V2 1.0 224\"", with: "\"<b>odd</b> <img src=x>\"")
            .write(toFile: odd + "/model.json", atomically: true, encoding: .utf8)
        let folder = Fixtures.path(Self.bundleFolder)
        for (path, name, alias) in [(folder, "mine", "production"), (folder, "mine", "staging"), (odd, "odd", "beta")] {
            let pushed = try setup.netrunner(["hub", "push", path, "--name", name, "--alias", alias])
            #expect(pushed.status == 0, "\(pushed.stderr)")
        }
        let rollout = try setup.netrunner(["hub", "alias", "mine", "production", "1:90", "2:10"])
        #expect(rollout.status == 0, "\(rollout.stderr)")
        // Twenty clients with a key check for production: adoption split about 90/10.
        for client in 1...20 {
            let (status, _, _) = try await setup.hub.request("/v1/models/mine/resolve?ref=production&client=c\(client)")
            #expect(status == 200)
        }
        // Screenshots go to the repository's git-ignored out/ folder, where CI keeps them.
        let shots = Fixtures.path("out/hub-page")
        let run = try ProcessResult.run(
            python, [Fixtures.path("tools/hub/page_check.py"), setup.hub.address, HubProcess.adminKey, shots])
        #expect(run.status == 0, "\(run.stderr.suffix(2000))")
        let line = try #require(run.stdout.split(separator: "\n").last)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(report["without_key"] as? String == "This hub needs a key to read: enter it above.", "\(line)")
        #expect(report["models"] as? [String] == ["mine", "odd"], "\(line)")
        let descriptions = report["descriptions"] as? [String] ?? []
        #expect(descriptions.contains { $0.hasPrefix("<b>odd</b> <img src=x>") }, "\(line)")
        #expect(report["markup_elements"] as? Int == 0, "a description from the hub is text, not markup: \(line)")
        #expect(report["versions"] as? [String] == ["2", "1"], "\(line)")
        let aliases = report["aliases"] as? [String] ?? []
        #expect(aliases.contains("production → 1 (90%), 2 (10%)") && aliases.contains("staging → 2"), "\(line)")
        #expect((report["history"] as? [String])?.count == 2, "production's two changes: \(line)")
        let adoption = report["adoption"] as? String ?? ""
        #expect(adoption.contains("version 1") && adoption.contains("clients"), "\(line)")
        #expect(report["console_errors"] as? [String] == [], "\(line)")
        #expect(report["key_in_url"] as? Bool == false, "\(line)")
        #expect(FileManager.default.fileExists(atPath: shots + "/hub-page.png"))
    }
}
