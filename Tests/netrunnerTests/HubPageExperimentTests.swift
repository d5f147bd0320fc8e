import Foundation
import NetRunnerTestSupport
import Testing

/// The hub's page shows a model's experiments (issue 56): per variant its figures as the API has
/// them, rounded as the page rounds them, its relative change's interval drawn, the guardrails
/// and the history; a conclusion the alias's gate refuses shows the hub's 409, Stop ends the
/// experiment, and one started from the page's form is concluded with its winner promoted. In
/// Chromium, with screenshots at 1280 and 390 pixels wide.
@Suite("netrunner hub: the hub's page shows its experiments", .serialized)
struct HubPageExperimentTests {
    /// Clients per version, and what each reports: ten goal outcomes (5 successes on version 1, 7
    /// on version 2) and four inferences, one of them failed for every third client of version 2.
    static let clientsPerVersion = 12
    static let successes = [1: 5, 2: 7]
    static let latencies: [Int: [Double]] = [1: [10, 12, 14, 16], 2: [12, 15, 18, 21]]

    @Test("In Chromium: an experiment's figures as the API's, its intervals, a refused conclusion, Stop, Start")
    func experimentsInBrowser() async throws {
        _ = try BrowserPage.python()
        let setup = try HubCommandTests.ProcessSetup(["--test-bundles", Fixtures.path("TestBundles")])
        // Production serves MobileNet V2 behind a gate the weak MobileNet V1 (version 2) fails.
        for arguments in [
            ["hub", "push", HubGateTests.uint8, "--name", "mnv2", "--alias", "production"],
            [
                "hub", "gate", "mnv2", "production", "--bundle", "imagenet-sample", "--rule",
                "classification_accuracy:min_absolute_change=-0.02",
            ],
            ["hub", "push", HubGateTests.weak, "--name", "mnv2"],
        ] {
            let run = try setup.netrunner(arguments)
            #expect(run.status == 0, "\(arguments): \(run.stderr)")
        }
        let hub = setup.hub
        let description = "<b>bold</b> & <script>alert(1)</script>"
        let start = try await Self.json(
            hub, "/v1/models/mnv2/experiments", method: "POST",
            body: [
                "alias": "production", "variants": [["version": 1, "weight": 50], ["version": 2, "weight": 50]],
                "goal": "accepted", "guardrails": ["failure_rate": 0.2, "latency_p90_ms": 50],
                "description": description,
            ])
        let id = try #require(start["id"] as? Int, "\(start)")
        let counted = try await Self.json(
            hub, "/v1/events", method: "POST",
            body: ["model": "mnv2", "alias": "production", "experiment": id, "events": try await Self.events(hub)])
        #expect(counted["accepted"] as? Int == 2 * Self.clientsPerVersion * 14, "\(counted)")

        // The figures are the events': a goal rate of 0.5 and 0.7, 14 events per client.
        let detail = try await Self.json(hub, "/v1/models/mnv2/experiments/\(id)")
        let arms = try #require((detail["analysis"] as? [String: Any])?["arms"] as? [[String: Any]], "\(detail)")
        #expect(arms.map { $0["goal_rate"] as? Double } == [0.5, 0.7], "\(arms)")
        #expect(arms.allSatisfy { $0["clients"] as? Int == 12 && $0["events"] as? Int == 168 }, "\(arms)")
        #expect(arms.last?["failure_rate"] as? Double == 4.0 / 48, "\(arms)")
        // Version 2 is evaluated against the gate (and fails) before the page concludes with it.
        try await Eventually.wait(for: "version 2's evaluation", upTo: .seconds(240), every: .milliseconds(200)) {
            let (_, _, body) = try await hub.request("/v1/models/mnv2/versions/2/evaluations")
            return String(decoding: body, as: UTF8.self).contains("\"failed\"")
        }

        let shots = Fixtures.path("out/hub-page")
        // (On a thread of its own: a cooperative thread blocked for the browser's run would starve the
        // tests beside this one.)
        let report = try await BrowserPage.check(
            "tools/hub/page_experiment_check.py", [hub.address, HubProcess.adminKey, shots])
        let line = report.line
        #expect(report["summary"] as? String == "Experiment \(id) on production: running", "\(line)")
        #expect(report["open"] as? Bool == true)
        #expect(report["description"] as? String == description, "\(line)")
        // Each figure shown is the API's, as the page rounds it.
        #expect(report["arms"] as? [[String: String]] == arms.map(Self.shown), "\(line)")
        #expect(report["intervals"] as? [String] == ["2"], "\(line)")
        #expect(report["estimates"] as? Int == 1 && report["chart_inside"] as? Bool == true, "\(line)")
        let guardrails = report["guardrails"] as? [String] ?? []
        #expect(
            guardrails.first?.hasPrefix("ok version 2 failure rate 8.3% against the baseline's 0.0%") == true
                && guardrails.count == 2, "\(line)")
        #expect(
            (report["history"] as? [String])?.first?.hasSuffix(
                "admin start: normal: 1 50%, 2 50% on production, baseline 1, goal accepted") == true, "\(line)")
        // The gate's refusal in the hub's words, told of what the page offers; the refusal kept in the history.
        let refused = report["conclude_refused"] as? String ?? ""
        #expect(
            refused.hasPrefix(
                "Version 2 is not promoted: \"production\" of mnv2 is gated (revision 1): version 2 failed")
                && refused.hasSuffix(
                    "The experiment keeps running: stop it, or conclude it once the version passes the gate."),
            "\(line)")
        #expect((report["refused_entries"] as? [String])?.count == 1, "\(line)")
        #expect(report["stopped"] as? String == "mnv2: experiment \(id) stopped; production serves version 1.")
        #expect(report["stopped_folded"] as? Bool == true, "\(line)")
        #expect(
            report["started"] as? String
                == "mnv2: experiment \(id + 1) on staging started (1 (50%), 2 (50%), baseline 1, goal accepted).",
            "\(line)")
        #expect(report["order"] as? [String] == ["\(id + 1)", "\(id)"], "\(line)")
        #expect(
            report["concluded"] as? String == "mnv2: experiment \(id + 1) concluded; version 2 promoted to staging.")
        #expect(report["console_errors"] as? [String] == [], "\(line)")
        #expect(report["narrow_overflow"] as? Bool == false, "\(line)")
        #expect(report["narrow_chart_fits"] as? Bool == true, "\(line)")
        #expect(FileManager.default.fileExists(atPath: shots + "/hub-page-experiments-1280.png"))
        #expect(FileManager.default.fileExists(atPath: shots + "/hub-page-experiments-390.png"))

        // What the page did, as the API has it.
        let first = try await Self.json(hub, "/v1/models/mnv2/experiments/\(id)")
        let experiment = first["experiment"] as? [String: Any]
        #expect(experiment?["status"] as? String == "stopped" && experiment?["ended_by"] as? String == "admin")
        #expect(
            (first["history"] as? [[String: Any]])?.map { $0["action"] as? String ?? "" }
                == ["start", "conclude-refused", "stop"], "\(first)")
        let second = try await Self.json(hub, "/v1/models/mnv2/experiments/\(id + 1)")
        let concluded = second["experiment"] as? [String: Any]
        #expect(concluded?["status"] as? String == "concluded" && concluded?["winner"] as? Int == 2, "\(second)")
        #expect(concluded?["guardrails"] as? [String: Double] == ["crashes": 0.05], "\(second)")
        let staging = try await Self.json(hub, "/v1/models/mnv2/resolve?ref=staging&client=anyone")
        #expect(staging["version"] as? Int == 2, "\(staging)")
    }

    /// A request with a JSON body (or none) whose reply is a JSON object.
    static func json(_ hub: HubProcess, _ path: String, method: String = "GET", body: [String: Any]? = nil)
        async throws -> [String: Any]
    {
        let data = try body.map { try JSONSerialization.data(withJSONObject: $0) }
        let (status, _, reply) = try await hub.request(
            path, method: method, body: data, headers: ["Content-Type": "application/json"])
        let text = String(decoding: reply, as: UTF8.self)
        try #require((200..<300).contains(status), "\(method) \(path): \(status) \(text)")
        return try #require(try JSONSerialization.jsonObject(with: reply) as? [String: Any], "\(text)")
    }

    /// ``clientsPerVersion`` clients of each version (the alias's hash places them: the hub tells
    /// which) and their events.
    static func events(_ hub: HubProcess) async throws -> [[String: Any]] {
        var clients: [Int: [String]] = [1: [], 2: []]
        var next = 0
        while clients.values.contains(where: { $0.count < clientsPerVersion }) {
            let client = "client-\(next)"
            next += 1
            let version = try await json(hub, "/v1/models/mnv2/resolve?ref=production&client=\(client)")["version"]
            if let version = version as? Int, clients[version, default: []].count < clientsPerVersion {
                clients[version, default: []].append(client)
            }
            try #require(next < 400, "the hash put \(clients) apart")
        }
        var events: [[String: Any]] = []
        for (version, ids) in clients.sorted(by: { $0.key < $1.key }) {
            for (index, client) in ids.enumerated() {
                for outcome in 0..<10 {
                    events.append([
                        "id": "o-\(outcome)", "client": client, "version": version, "kind": "outcome",
                        "name": "accepted", "success": outcome < successes[version, default: 0],
                    ])
                }
                for (inference, latency) in latencies[version, default: []].enumerated() {
                    events.append([
                        "id": "i-\(inference)", "client": client, "version": version, "kind": "inference",
                        "latency_ms": latency, "failed": version == 2 && inference == 0 && index % 3 == 0,
                    ])
                }
            }
        }
        return events
    }

    /// An arm's figures as the page shows them (hub-experiments.js's rounding: half up).
    static func shown(_ arm: [String: Any]) -> [String: String] {
        func number(_ key: String) -> Double? { arm[key] as? Double }
        func percent(_ share: Double) -> String { String(format: "%.1f%%", (share * 1000 + 0.5).rounded(.down) / 10) }
        func signed(_ change: Double) -> String {
            let rounded = (change * 1000 + 0.5).rounded(.down) / 10
            return (rounded >= 0 ? "+" : "") + String(format: "%.1f%%", rounded)
        }
        func milliseconds(_ value: Double) -> String { String(format: "%.1f", (value * 10 + 0.5).rounded(.down) / 10) }
        let baseline = arm["baseline"] as? Bool == true
        let version = arm["version"] as? Int ?? 0
        var figures = [
            "version": "\(version)" + (baseline ? " (baseline)" : ""),
            "goal_rate": percent(number("goal_rate") ?? -1) + " of \(arm["outcomes"] as? Int ?? -1)",
            "chance": "—", "change": "—", "decision": baseline ? "baseline" : arm["decision"] as? String ?? "—",
            "weight": "\(arm["weight"] as? Int ?? -1)%", "clients": "\(arm["clients"] as? Int ?? -1)",
            "events": "\(arm["events"] as? Int ?? -1)",
            "failures": percent(number("failure_rate") ?? -1) + " of \(arm["inferences"] as? Int ?? -1)",
            "crashes": percent(number("crash_rate") ?? -1), "latency": "—",
        ]
        if !baseline, let chance = number("chance_to_beat_baseline"), let change = number("relative_change"),
            let lower = number("relative_change_lower"), let upper = number("relative_change_upper")
        {
            figures["chance"] = percent(chance)
            figures["change"] = "\(signed(change)) [\(signed(lower)), \(signed(upper))]"
        }
        if let p50 = number("latency_p50_ms"), let p90 = number("latency_p90_ms") {
            figures["latency"] = "\(milliseconds(p50)) / \(milliseconds(p90)) ms"
        }
        return figures
    }
}
