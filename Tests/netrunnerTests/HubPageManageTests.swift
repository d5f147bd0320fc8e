import Foundation
import NetRunnerTestSupport
import Testing

/// The hub's page changing the hub as Firebase's console does (issue 33, item 14): a version
/// uploaded, an alias rolled out 90/10 and rolled back, all in Chromium with a key typed in;
/// without a key the controls are disabled. What the hub holds afterwards is read from its
/// JSON, not from the page.
@Suite("netrunner hub: the hub's page publishes", .serialized)
struct HubPageManageTests {
    @Test("In Chromium with the admin key: upload, a 90/10 alias, a rollback; no key, no controls")
    func manageInBrowser() async throws {
        let python = Fixtures.path(".venv-test/bin/python")
        try #require(FileManager.default.isExecutableFile(atPath: python), "run scripts/setup-test-python.sh")
        try #require(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver"),
            "run scripts/install-test-packages.sh (make test does)")
        let setup = try HubCommandTests.ProcessSetup()
        let tflite = Fixtures.path(HubCommandTests.tflite)
        let pushed = try setup.netrunner(["hub", "push", tflite, "--name", "mine", "--alias", "production"])
        #expect(pushed.status == 0, "\(pushed.stderr)")
        let (made, _, keyBody) = try await setup.hub.request(
            "/v1/keys", method: "POST", body: Data(#"{"name": "viewer", "scope": "read"}"#.utf8))
        #expect(made == 201)
        let readKey = try #require(
            (try JSONSerialization.jsonObject(with: keyBody) as? [String: Any])?["key"] as? String)
        let shots = Fixtures.path("out/hub-page")
        let run = try ProcessResult.run(
            python,
            [
                Fixtures.path("tools/hub/page_manage_check.py"), setup.hub.address, readKey, HubProcess.adminKey,
                tflite, shots,
            ])
        #expect(run.status == 0, "\(run.stderr.suffix(2000))")
        let line = try #require(run.stdout.split(separator: "\n").last)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        // Without a key: nothing that changes the hub can be used, and the page says a key is needed.
        #expect(report["enabled_without_key"] as? [String] == [], "\(line)")
        #expect(report["alias_buttons_enabled_without_key"] as? [String] == [], "\(line)")
        #expect((report["note_without_key"] as? String ?? "").contains("A key is needed"), "\(line)")
        // The hub's refusals in the status line.
        #expect(
            report["read_key_refusal"] as? String
                == #"The key was refused: The key "viewer" has the read scope; this needs publish."#, "\(line)")
        #expect((report["bad_weights"] as? String ?? "").contains("adding up to 100"), "\(line)")
        #expect(report["upload"] as? String == "Published mine version 2, staging → it.", "\(line)")
        #expect(report["rollout"] as? String == "mine: production → 1 (90%), 2 (10%).", "\(line)")
        #expect(report["rollback"] as? String == "mine: production rolled back to 1.", "\(line)")
        #expect(report["key_in_url"] as? Bool == false, "\(line)")
        #expect(report["console_errors"] as? [String] == [], "\(line)")
        // What the hub holds, from its JSON.
        struct Target: Decodable, Equatable {
            var version: Int
            var weight: Int
        }
        struct Alias: Decodable {
            var alias: String
            var targets: [Target]
        }
        struct Version: Decodable {
            var version: Int
            var sha256: String
        }
        struct Model: Decodable {
            var versions: [Version]
            var aliases: [Alias]
        }
        struct Change: Decodable {
            var action: String
            var previous: [Target]
            var targets: [Target]
        }
        struct History: Decodable { var history: [Change] }
        let (status, _, body) = try await setup.hub.request("/v1/models/mine", key: nil)
        #expect(status == 200)
        let model = try JSONDecoder().decode(Model.self, from: body)
        #expect(model.versions.map(\.version) == [1, 2])
        let digest = try #require(model.versions.first?.sha256)
        #expect(model.versions.last?.sha256 == digest, "the uploaded file, byte for byte")
        let aliases = Dictionary(uniqueKeysWithValues: model.aliases.map { ($0.alias, $0.targets) })
        #expect(aliases["production"] == [Target(version: 1, weight: 100)])
        #expect(aliases["staging"] == [Target(version: 2, weight: 100)])
        let (_, _, historyBody) = try await setup.hub.request("/v1/models/mine/aliases/production/history")
        let history = try JSONDecoder().decode(History.self, from: historyBody).history
        let rollout = [Target(version: 1, weight: 90), Target(version: 2, weight: 10)]
        #expect(history.map(\.action) == ["set", "set", "rollback"], "\(history)")
        #expect(history.dropFirst().first?.targets == rollout)
        #expect(history.last?.previous == rollout && history.last?.targets == [Target(version: 1, weight: 100)])
        #expect(FileManager.default.fileExists(atPath: shots + "/hub-page-manage.png"))
    }
}
