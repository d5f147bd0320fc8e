import Foundation
import NetRunnerTestSupport
import Testing

/// The hub's page changing the hub as Firebase's console does (issue 33, item 14): a version
/// uploaded, an alias rolled out 90/10 and rolled back, a version deleted, a key made, used and
/// revoked, all in Chromium with a key typed in; without a key the controls are disabled. What
/// the hub holds afterwards is read from its JSON, not from the page.
@Suite("netrunner hub: the hub's page publishes", .serialized)
struct HubPageManageTests {
    @Test("In Chromium with the admin key: upload, a 90/10 alias, a rollback; no key, no controls")
    func manageInBrowser() async throws {
        let python = try BrowserPage.python()
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
                tflite, shots, Fixtures.path("Models/face_detection_short_range.tflite"),
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
        // Another task: refused with the page's own way to ask for it (issue 53), then published.
        let refusal = report["task_change_refusal"] as? String ?? ""
        #expect(
            refusal.contains("classification task") && refusal.contains("detection task")
                && !refusal.contains("--allow-task-change"), "\(line)")
        #expect(report["task_change"] as? String == "Published mine version 3.", "\(line)")
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
        #expect(model.versions.map(\.version) == [1, 2, 3])
        let digest = try #require(model.versions.first?.sha256)
        #expect(model.versions[1].sha256 == digest, "the uploaded file, byte for byte")
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

    @Test("In Chromium: delete a version (an aliased one refused), make a key, use it, revoke it (401)")
    func deleteAndKeysInBrowser() async throws {
        let python = try BrowserPage.python()
        let setup = try HubCommandTests.ProcessSetup()
        let tflite = Fixtures.path(HubCommandTests.tflite)
        for alias in ["production", nil] {
            let pushed = try setup.netrunner(
                ["hub", "push", tflite, "--name", "mine"] + (alias.map { ["--alias", $0] } ?? []))
            #expect(pushed.status == 0, "\(pushed.stderr)")
        }
        let (made, _, keyBody) = try await setup.hub.request(
            "/v1/keys", method: "POST", body: Data(#"{"name": "publisher", "scope": "publish"}"#.utf8))
        #expect(made == 201)
        let publishKey = try #require(
            (try JSONSerialization.jsonObject(with: keyBody) as? [String: Any])?["key"] as? String)
        let shots = Fixtures.path("out/hub-console")
        let run = try ProcessResult.run(
            python,
            [
                Fixtures.path("tools/hub/page_console_check.py"), setup.hub.address, publishKey, HubProcess.adminKey,
                shots,
            ])
        #expect(run.status == 0, "\(run.stderr.suffix(2000))")
        let line = try #require(run.stdout.split(separator: "\n").last)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let string = { (name: String) in report[name] as? String ?? "" }
        let asked = { (name: String) in report[name] as? [String: String] ?? [:] }
        // Without a key, or with one that is not an admin's: no keys section; Delete needs a key.
        #expect(report["keys_shown_without_key"] as? Bool == false, "\(line)")
        #expect(report["delete_enabled_without_key"] as? [String] == [], "\(line)")
        #expect(report["keys_shown_with_publish_key"] as? Bool == false, "\(line)")
        #expect(
            string("publish_key_delete")
                == #"The key was refused: The key "publisher" has the publish scope; this needs admin."#, "\(line)")
        // Deleting: asked first, naming the model and the version; the hub's refusal in its words.
        #expect(report["keys_listed"] as? [[String]] == [["admin", "admin"], ["publisher", "publish"]], "\(line)")
        #expect(asked("confirm_delete")["title"] == "Delete mine version 1?", "\(line)")
        #expect(asked("confirm_delete")["text"]?.contains("mine@1") == true, "\(line)")
        #expect(asked("confirm_delete")["button"] == "Delete version 1", "\(line)")
        #expect(string("aliased_delete") == "version 1 of mine is what production points to; move the alias first")
        #expect(report["versions_after_refusal"] as? [String] == ["2", "1"], "\(line)")
        #expect(report["versions_after_cancel"] as? [String] == ["2", "1"], "cancelled: nothing deleted: \(line)")
        #expect(asked("confirm_delete_2")["title"] == "Delete mine version 2?", "\(line)")
        #expect(string("deleted") == "Deleted mine version 2.", "\(line)")
        #expect(report["versions_after_delete"] as? [String] == ["1"], "\(line)")
        #expect(report["latest_after_delete"] as? [String] == ["1"], "\(line)")
        // Keys: a taken name is not replaced without asking; a new key's secret is shown once.
        #expect(asked("replace_confirm")["title"] == "Replace the key publisher?", "\(line)")
        #expect(asked("replace_confirm")["text"]?.contains("the old secret stops working") == true, "\(line)")
        #expect(report["key_shown_after_cancel"] as? Bool == false, "\(line)")
        #expect(string("made") == "Made the key laptop (publish): copy it now, it is not shown again.", "\(line)")
        let secret = string("secret")
        #expect(secret.hasPrefix("nrh_") && secret.count == 68, "\(line)")
        #expect(string("new_key_title") == "The new key laptop (publish):", "\(line)")
        #expect(string("new_key_note").contains("it is not shown again"), "\(line)")
        #expect(string("copy") == "Copied the new key to the clipboard.", "\(line)")
        #expect(
            report["keys_after_make"] as? [[String]] == [
                ["admin", "admin"], ["laptop", "publish"], ["publisher", "publish"],
            ],
            "\(line)")
        for hidden in [secret, publishKey, HubProcess.adminKey] {
            #expect(!string("key_list_text").contains(hidden), "the list shows no secret: \(line)")
        }
        // The secret shown works against the hub while the key lives: it reads, and is a publish key.
        #expect(report["secret_reads"] as? Int == 200, "\(line)")
        let listing = report["secret_lists_keys"] as? [Any] ?? []
        #expect(listing.first as? Int == 403, "\(line)")
        #expect(listing.last as? String == #"The key "laptop" has the publish scope; this needs admin."#, "\(line)")
        let done = report["secret_after_done"] as? [Any] ?? []
        #expect(done.first as? Bool == false && done.last as? String == "", "Done forgets it: \(line)")
        // Revoked through the page: asked first, gone from the list, refused by the hub.
        #expect(asked("revoke_confirm")["title"] == "Revoke the key laptop?", "\(line)")
        #expect(asked("revoke_confirm")["button"] == "Revoke laptop", "\(line)")
        #expect(string("revoked") == "Revoked the key laptop.", "\(line)")
        #expect(report["keys_after_revoke"] as? [String] == ["admin", "publisher"], "\(line)")
        #expect((report["secret_after_revoke"] as? [Any])?.first as? Int == 401, "\(line)")
        #expect(report["key_in_url"] as? Bool == false, "\(line)")
        #expect(report["console_errors"] as? [String] == [], "\(line)")
        // Nothing wider than the screen: the tables scroll inside their sections.
        let widths = report["page_widths"] as? [String: Int] ?? [:]
        #expect(widths["1280"] == 1280 && widths["390"] == 390, "\(line)")
        // What the hub holds, from its JSON.
        struct Version: Decodable { var version: Int }
        struct Model: Decodable { var versions: [Version] }
        let (status, _, body) = try await setup.hub.request("/v1/models/mine", key: nil)
        #expect(status == 200)
        #expect(try JSONDecoder().decode(Model.self, from: body).versions.map(\.version) == [1])
        #expect(try await setup.hub.request("/v1/models/mine/versions/2", key: nil).status == 404)
        #expect(try await setup.hub.request("/v1/models/mine/versions/1", key: nil).status == 200)
        struct Key: Decodable { var name: String }
        struct Keys: Decodable { var keys: [Key] }
        let (listed, _, keysBody) = try await setup.hub.request("/v1/keys")
        #expect(listed == 200)
        #expect(try JSONDecoder().decode(Keys.self, from: keysBody).keys.map(\.name) == ["admin", "publisher"])
        #expect(try await setup.hub.request("/v1/models/mine", key: secret).status == 401, "revoked")
        #expect(try await setup.hub.request("/v1/models/mine", key: publishKey).status == 200, "the other key lives")
        for name in ["hub-console-1280.png", "hub-console-390.png", "hub-console-confirm-390.png"] {
            #expect(FileManager.default.fileExists(atPath: shots + "/" + name), "\(name)")
        }
    }
}
