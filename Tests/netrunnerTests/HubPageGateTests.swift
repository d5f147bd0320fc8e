import Foundation
import NetRunnerTestSupport
import Testing

/// The hub's page shows where each version stands with the gates (issue 46): its status, its
/// metrics beside the baseline's, the rules it missed and its report; a move the gate refuses
/// shows the hub's 409, and a forced move is marked as such in the history. In Chromium, with
/// screenshots at 1280 and 390 pixels wide.
@Suite("netrunner hub: the hub's page shows its gates", .serialized)
struct HubPageGateTests {
    @Test("In Chromium: gate statuses, a failed version's figures and report, a refused move, a forced one")
    func gatesInBrowser() async throws {
        _ = try BrowserPage.python()
        let setup = try HubCommandTests.ProcessSetup(["--test-bundles", Fixtures.path("TestBundles")])
        for arguments in [
            ["hub", "push", HubGateTests.float, "--name", "mnv2", "--alias", "production"],
            [
                "hub", "gate", "mnv2", "production", "--bundle", "imagenet-sample", "--rule",
                "classification_accuracy:min_absolute_change=-0.02", "--rule", "agreement:threshold=0.85",
            ],
            ["hub", "push", HubGateTests.uint8, "--name", "mnv2", "--alias", "production"],
            ["hub", "push", HubGateTests.weak, "--name", "mnv2"],
        ] {
            let run = try setup.netrunner(arguments)
            #expect(run.status == 0, "\(arguments): \(run.stderr)")
        }
        try await Eventually.wait(for: "version 3's evaluation", upTo: .seconds(240)) {
            let (_, _, body) = try await setup.hub.request("/v1/models/mnv2/versions/3/evaluations")
            return String(decoding: body, as: UTF8.self).contains("\"failed\"")
        }
        let shots = Fixtures.path("out/hub-page")
        // (On a thread of its own: a cooperative thread blocked for the browser's run would starve the
        // tests beside this one.)
        let report = try await BrowserPage.check(
            "tools/hub/page_gate_check.py", [setup.hub.address, HubProcess.adminKey, shots])
        let line = report.line
        #expect(
            report["statuses"] as? [String]
                == [
                    "production: failed", "staging: failed", "production: passed", "staging: passed",
                    "production: passed", "staging: passed",
                ],
            "\(line)")
        #expect(
            (report["gates"] as? [String])?.first?.contains(
                "classification_accuracy:min_absolute_change=-0.02; agreement:threshold=0.85") == true, "\(line)")
        let failures = report["failures"] as? [String] ?? []
        #expect(
            failures.first
                == "classification_accuracy 0.625 against the baseline's 0.875: a gain of -0.25, less than "
                + "min_absolute_change -0.02 (imagenet-sample)", "\(line)")
        #expect(
            report["gate_set"] as? String
                == "mnv2: the gate on staging is set (revision 1); every version is evaluated against it.", "\(line)")
        #expect(
            report["staging_gate"] as? String
                == "staging on imagenet-sample (revision 1, admin): top5:threshold=0.8; latency_p50_ms:threshold=1000",
            "\(line)")
        #expect(report["summary"] as? String == "Gate of production: failed against version 2, 2 rules missed")
        let metrics = report["metrics"] as? [[String]] ?? []
        #expect(metrics.contains(["classification_accuracy", "0.625", "0.875"]), "\(line)")
        #expect(metrics.contains(["agreement", "0.375", ""]), "\(line)")
        #expect((report["report_title"] as? String ?? "").contains("ImageNet sample photos"), "\(line)")
        let links = report["report_links"] as? [String] ?? []
        #expect(
            links
                == ["production", "staging"].map {
                    "\(setup.hub.address)/v1/models/mnv2/versions/3/evaluations/\($0)/imagenet-sample"
                })
        let refusal = report["refusal"] as? String ?? ""
        #expect(refusal.contains("version 3 failed: classification_accuracy"), "\(line)")
        // A person at the page is told of its Force field, not of a command line (issue 53).
        #expect(refusal.contains("type the reason in Force") && !refusal.contains("netrunner hub alias"), "\(line)")
        #expect(report["unchanged"] as? String == "mnv2: production already serves version 2; nothing changed.")
        #expect(
            report["forced"] as? String
                == "mnv2: production → 3, forced past its gate (reason: the kiosk needs the small model).", "\(line)")
        #expect(
            (report["forced_entries"] as? [String])?.first?.contains(
                "force: 2 → 3 — forced past its gate: the kiosk needs the small model") == true, "\(line)")
        #expect(report["console_errors"] as? [String] == [], "\(line)")
        #expect(report["narrow_overflow"] as? Bool == false, "\(line)")
        #expect(report["narrow_gates_visible"] as? Bool == true, "\(line)")
        #expect(FileManager.default.fileExists(atPath: shots + "/hub-page-gates-1280.png"))
        #expect(FileManager.default.fileExists(atPath: shots + "/hub-page-gates-390.png"))
    }
}
