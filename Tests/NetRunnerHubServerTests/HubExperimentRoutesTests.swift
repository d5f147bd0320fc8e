import Foundation
import HTTPTypes
import HummingbirdTesting
import NetRunnerHub
import NetRunnerSupport
import NetRunnerTestSupport
import Testing

@testable import NetRunnerHubServer

/// Experiments on an alias in process (issue 56): start, list, show, stop, conclude; one
/// running per alias; sticky assignment; events deduplicated, bounded, checked against the
/// assignment; the report scope; a guardrail's stop; a conclusion its gate refuses.
@Suite("Hub experiments in process")
struct HubExperimentRoutesTests {
    typealias Client = any TestClientProtocol

    static func call(
        _ client: Client, _ uri: String, method: HTTPRequest.Method = .get, key: String? = nil, body: String? = nil
    )
        async throws -> (status: Int, json: [String: Any], text: String)
    {
        let headers: HTTPFields = [.authorization: "Bearer \(key ?? HubRoutesTests.admin)"]
        let reply = try await HubRoutesTests.call(client, uri, method: method, headers: headers, body: body)
        return (reply.status, HubRoutesTests.json(reply.body), String(decoding: reply.body, as: UTF8.self))
    }

    static func start(_ client: Client, _ body: String) async throws -> (status: Int, json: [String: Any], text: String)
    {
        try await call(client, "/v1/models/m/experiments", method: .post, body: body)
    }

    static let fiftyFifty =
        #"{"alias": "production", "variants": [{"version": 1, "weight": 50}, {"version": 2, "weight": 50}], "#
        + #""baseline": 1, "goal": "accepted", "guardrails": {"failure_rate": 0.01}}"#

    /// The version resolving `production` gives a client.
    static func resolved(_ client: Client, _ id: String) async throws -> Int {
        try await call(client, "/v1/models/m/resolve?ref=production&client=\(id)").json["version"] as? Int ?? 0
    }

    /// Events as JSON: `(id, client, version, kind fields)`.
    static func batch(_ events: [(String, String, Int, String)], experiment: Int? = nil) -> String {
        let items = events.map { #"{"id": "\#($0.0)", "client": "\#($0.1)", "version": \#($0.2), \#($0.3)}"# }
        let id = experiment.map { #""experiment": \#($0), "# } ?? ""
        return #"{"model": "m", "alias": "production", \#(id)"events": [\#(items.joined(separator: ", "))]}"#
    }

    static func post(_ client: Client, _ body: String, key: String? = nil) async throws -> (
        status: Int, json: [String: Any], text: String
    ) {
        try await call(client, "/v1/events", method: .post, key: key, body: body)
    }

    @Test("Start, list, show, stop, conclude; one running experiment per alias; the alias's history")
    func lifecycle() async throws {
        try await HubRoutesTests.withHub { client, _ in
            let started = try await Self.start(client, Self.fiftyFifty)
            #expect(started.status == 201, "\(started.text)")
            let id = try #require(started.json["id"] as? Int)
            #expect(started.json["status"] as? String == "running")
            let again = try await Self.start(client, Self.fiftyFifty)
            #expect(again.status == 409 && again.text.contains("one running experiment per alias"), "\(again.text)")
            let alias = try await Self.call(client, "/v1/models/m/aliases/production")
            #expect((alias.json["targets"] as? [[String: Any]])?.count == 2, "\(alias.text)")
            // While it runs the alias is the experiment's: a move or a rollback is 409.
            let moved = try await Self.call(
                client, "/v1/models/m/aliases/production", method: .put, body: #"{"version": 2}"#)
            #expect(moved.status == 409 && moved.text.contains("Experiment \(id) is running"), "\(moved.text)")
            let back = try await Self.call(client, "/v1/models/m/aliases/production/rollback", method: .post)
            #expect(back.status == 409)
            let list = try await Self.call(client, "/v1/models/m/experiments")
            #expect((list.json["experiments"] as? [[String: Any]])?.first?["id"] as? Int == id)
            let shown = try await Self.call(client, "/v1/models/m/experiments/\(id)")
            let arms = (shown.json["analysis"] as? [String: Any])?["arms"] as? [[String: Any]] ?? []
            #expect(arms.count == 2 && arms[0]["baseline"] as? Bool == true, "\(shown.text)")
            let stopped = try await Self.call(client, "/v1/models/m/experiments/\(id)/stop", method: .post)
            #expect(stopped.status == 200 && stopped.json["status"] as? String == "stopped", "\(stopped.text)")
            #expect(try await Self.resolved(client, "anyone") == 1)
            let twice = try await Self.call(client, "/v1/models/m/experiments/\(id)/stop", method: .post)
            #expect(twice.status == 409)
            // Another one may start now; concluded with a named winner, which becomes the target.
            let next = try await Self.start(client, Self.fiftyFifty)
            let second = try #require(next.json["id"] as? Int)
            #expect(second == id + 1)
            let concluded = try await Self.call(
                client, "/v1/models/m/experiments/\(second)/conclude", method: .post, body: #"{"winner": 2}"#)
            #expect(concluded.status == 200 && concluded.json["winner"] as? Int == 2, "\(concluded.text)")
            #expect(try await Self.resolved(client, "anyone") == 2)
            let history = try await Self.call(client, "/v1/models/m/aliases/production/history")
            let actions = (history.json["history"] as? [[String: Any]] ?? []).compactMap { $0["action"] as? String }
            #expect(
                actions == ["experiment-start", "experiment-stop", "experiment-start", "experiment-conclude"],
                "\(actions)")
            let detail = try await Self.call(client, "/v1/models/m/experiments/\(second)")
            let steps = (detail.json["history"] as? [[String: Any]] ?? []).compactMap { $0["action"] as? String }
            #expect(steps == ["start", "conclude"], "\(detail.text)")
            // Without a declared winner, concluding is refused; unknown ids are 404; bad ids 400.
            let third = try #require(try await Self.start(client, Self.fiftyFifty).json["id"] as? Int)
            let undecided = try await Self.call(client, "/v1/models/m/experiments/\(third)/conclude", method: .post)
            #expect(undecided.status == 409 && undecided.text.contains("no winner yet"), "\(undecided.text)")
            #expect(try await Self.call(client, "/v1/models/m/experiments/999").status == 404)
            #expect(try await Self.call(client, "/v1/models/m/experiments/-1").status == 400)
            #expect(try await Self.call(client, "/v1/models/m/experiments/99999999999999999999").status == 400)
        }
    }

    @Test("Assignment is sticky per client id, the alias's rollout hash, and weights hold over many ids")
    func stickyAssignment() async throws {
        try await HubRoutesTests.withHub { client, _ in
            let body =
                #"{"alias": "production", "variants": [{"version": 1, "weight": 90}, {"version": 2, "weight": 10}]}"#
            let started = try await Self.start(client, body)
            let experiment = try #require(
                try? JSONDecoder().decode(HubExperiment.self, from: Data(started.text.utf8)), "\(started.text)")
            var counts: [Int: Int] = [:]
            for index in 0..<400 {
                let version = try await Self.resolved(client, "c\(index)")
                counts[version, default: 0] += 1
                #expect(experiment.variants[experiment.arm(for: "c\(index)")].version == version)
                if index < 20 { #expect(try await Self.resolved(client, "c\(index)") == version) }
            }
            // 10% of 400 is 40; a binomial's 3 standard deviations are 18.
            #expect((22...58).contains(counts[2] ?? 0), "\(counts)")
        }
    }

    @Test("Events: deduplicated by id, refused for a version not assigned, bounded, and numbers checked")
    func events() async throws {
        try await HubRoutesTests.withHub { client, _ in
            let started = try await Self.start(client, Self.fiftyFifty)
            let experiment = try JSONDecoder().decode(HubExperiment.self, from: Data(started.text.utf8))
            let mine = experiment.variants[experiment.arm(for: "alice")].version
            let other = mine == 1 ? 2 : 1
            let events = [
                ("e1", "alice", mine, #""kind": "outcome", "name": "accepted", "success": true"#),
                ("e2", "alice", mine, #""kind": "inference", "latency_ms": 12.5, "failed": false"#),
                ("e3", "alice", other, #""kind": "crash""#),
            ]
            let first = try await Self.post(client, Self.batch(events, experiment: experiment.id))
            #expect(first.status == 200 && first.json["accepted"] as? Int == 2, "\(first.text)")
            let refused = first.json["refused"] as? [[String: Any]] ?? []
            #expect(refused.first?["id"] as? String == "e3", "\(first.text)")
            let reason = refused.first?["reason"] as? String ?? ""
            #expect(reason.contains("assigned version \(mine)"), "\(reason)")
            // The batch sent again counts once.
            let retried = try await Self.post(client, Self.batch(events))
            #expect(retried.json["accepted"] as? Int == 0 && retried.json["duplicates"] as? Int == 2, "\(retried.text)")
            let shown = try await Self.call(client, "/v1/models/m/experiments/\(experiment.id)")
            let arms = (shown.json["analysis"] as? [String: Any])?["arms"] as? [[String: Any]] ?? []
            let arm = arms.first { $0["version"] as? Int == mine } ?? [:]
            #expect(arm["events"] as? Int == 2 && arm["clients"] as? Int == 1 && arm["outcomes"] as? Int == 1, "\(arm)")
            // Another experiment's id is 409; hostile numbers and shapes are 400, never a trap.
            #expect(try await Self.post(client, Self.batch(events, experiment: experiment.id + 1)).status == 409)
            let hostile = [
                ("h1", "alice", mine, #""kind": "inference", "latency_ms": -1"#),
                ("h2", "alice", mine, #""kind": "inference", "latency_ms": 1e308"#),
                ("h3", "alice", mine, #""kind": "inference", "latency_ms": 1e400"#),
                ("h4", "alice", 99_999_999_999_999_999, #""kind": "crash""#),
                ("h5", "alice", 0, #""kind": "crash""#),
                ("h6", "alice", mine, #""kind": "outcome", "name": "accepted", "value": NaN"#),
                ("h7", "alice", mine, #""kind": "outcome", "name": "accepted", "value": 1e13"#),
                ("h8", "alice", mine, #""kind": "outcome""#),
                ("h9", "", mine, #""kind": "crash""#),
                ("", "alice", mine, #""kind": "crash""#),
                ("h10", "alice", mine, #""kind": "explode""#),
            ]
            for event in hostile {
                let reply = try await Self.post(client, Self.batch([event]))
                #expect(reply.status == 400, "\(event): \(reply.text)")
            }
            let many = (0...HubRoutes.eventBatchLimit).map { ("m\($0)", "bob", 1, #""kind": "crash""#) }
            #expect(try await Self.post(client, Self.batch(many)).status == 400)
            #expect(try await Self.post(client, #"{"model": "m", "alias": "production", "events": []}"#).status == 400)
            #expect(
                try await Self.post(
                    client,
                    #"{"model": "m", "alias": "staging", "events": [{"id": "x", "#
                        + #""client": "c", "version": 1, "kind": "crash"}]}"#
                ).status == 409)
            #expect(
                try await Self.post(
                    client,
                    #"{"model": "m", "alias": "production", "experiment": -4, "#
                        + #""events": [{"id": "x", "client": "c", "version": 1, "kind": "crash"}]}"#
                ).status == 400)
            // Experiment settings out of range are 400 too.
            for body in [
                #"{"alias": "staging", "variants": [{"version": 1, "weight": 50}, {"version": 2, "weight": 60}]}"#,
                #"{"alias": "staging", "variants": [{"version": 1, "weight": 100}]}"#,
                #"{"alias": "staging", "variants": [{"version": 1, "weight": 50}, {"version": 1, "weight": 50}]}"#,
                #"{"alias": "staging", "variants": [{"version": 1, "weight": 50}, {"version": 2, "weight": 50}], "alpha": 2}"#,
                #"{"alias": "staging", "variants": [{"version": 1, "weight": 50}, {"version": 2, "weight": 50}], "#
                    + #""guardrails": {"failure_rate": -1}}"#,
                #"{"alias": "latest", "variants": [{"version": 1, "weight": 50}, {"version": 2, "weight": 50}]}"#,
                #"{"alias": "staging", "variants": [{"version": 1, "weight": 50}, {"version": 2, "weight": 50}], "#
                    + #""mode": "aa"}"#,
            ] {
                #expect(try await Self.start(client, body).status == 400, "\(body)")
            }
        }
    }

    @Test("The report scope may post events and nothing else")
    func reportScope() async throws {
        try await HubRoutesTests.withHub { client, _ in
            let made = try await Self.call(
                client, "/v1/keys", method: .post, body: #"{"name": "phone", "scope": "report"}"#)
            let key = try #require(made.json["key"] as? String, "\(made.text)")
            let started = try await Self.start(client, Self.fiftyFifty)
            let experiment = try JSONDecoder().decode(HubExperiment.self, from: Data(started.text.utf8))
            let version = experiment.variants[experiment.arm(for: "p1")].version
            let posted = try await Self.post(client, Self.batch([("r1", "p1", version, #""kind": "crash""#)]), key: key)
            #expect(posted.status == 200 && posted.json["accepted"] as? Int == 1, "\(posted.text)")
            for (uri, method) in [
                ("/v1/models", HTTPRequest.Method.get), ("/v1/models/m/resolve?ref=production", .get),
                ("/v1/models/m/experiments", .get), ("/v1/models/m/experiments/\(experiment.id)/stop", .post),
            ] {
                #expect(try await Self.call(client, uri, method: method, key: key).status == 403, "\(uri)")
            }
            #expect(try await Self.start(client, Self.fiftyFifty).status == 409)
            let anonymous = try await HubRoutesTests.call(
                client, "/v1/events", method: .post, body: Self.batch([("r2", "p1", version, #""kind": "crash""#)]))
            #expect(anonymous.status == 401)
        }
    }

    @Test(
        "A guardrail trips: the experiment stops, the alias returns to the baseline, by \"experiment\", with the figures"
    )
    func guardrailTrip() async throws {
        try await HubRoutesTests.withHub { client, _ in
            let started = try await Self.start(client, Self.fiftyFifty)
            let experiment = try JSONDecoder().decode(HubExperiment.self, from: Data(started.text.utf8))
            var stopped = false
            var sent = 0
            // The baseline fails 10% of its inferences, the variant 60%: 50 clients of 10 events a batch.
            while !stopped && sent < 20 {
                var events: [(String, String, Int, String)] = []
                for index in 0..<HubRoutes.eventBatchLimit {
                    let client = "k\(sent)-\(index / 10)"
                    let version = experiment.variants[experiment.arm(for: client)].version
                    let failed = version == 2 ? index % 10 < 6 : index % 10 == 0
                    events.append(
                        (
                            "\(sent)-\(index)", client, version,
                            #""kind": "inference", "latency_ms": 10, "failed": \#(failed)"#
                        ))
                }
                let reply = try await Self.post(client, Self.batch(events))
                #expect(reply.status == 200, "\(reply.text)")
                stopped = reply.json["stopped"] as? Bool == true
                sent += 1
            }
            #expect(stopped, "no guardrail tripped after \(sent) batches")
            let detail = try await Self.call(client, "/v1/models/m/experiments/\(experiment.id)")
            let record = detail.json["experiment"] as? [String: Any] ?? [:]
            #expect(record["status"] as? String == "stopped" && record["ended_by"] as? String == "experiment")
            #expect((record["outcome"] as? String ?? "").contains("failure_rate"), "\(record)")
            #expect(try await Self.resolved(client, "anyone") == 1)
            let history = try await Self.call(client, "/v1/models/m/aliases/production/history")
            let last = (history.json["history"] as? [[String: Any]])?.last ?? [:]
            #expect(last["action"] as? String == "experiment-stop" && last["changed_by"] as? String == "experiment")
            #expect((last["reason"] as? String ?? "").contains("guardrail failure_rate tripped"), "\(last)")
            let metrics = try await HubRoutesTests.call(client, "/metrics")
            let text = String(decoding: metrics.body, as: UTF8.self)
            #expect(text.contains("netrunner_hub_experiment_guardrail_stops 1"), "\(text)")
            #expect(text.contains("netrunner_hub_experiments_running 0"))
            // Events for a stopped experiment are 409.
            #expect(try await Self.post(client, Self.batch([("late", "k0", 1, #""kind": "crash""#)])).status == 409)
        }
    }

    @Test("A crash guardrail trips against a baseline that never crashed")
    func crashGuardrail() async throws {
        try await HubRoutesTests.withHub { client, _ in
            let body =
                #"{"alias": "production", "variants": [{"version": 1, "weight": 50}, {"version": 2, "weight": 50}], "#
                + #""guardrails": {"crashes": 0.01}}"#
            let started = try await Self.start(client, body)
            let experiment = try JSONDecoder().decode(HubExperiment.self, from: Data(started.text.utf8))
            // 300 clients: half of the variant's crash once, the baseline's never.
            let events = (0..<300).map { index -> (String, String, Int, String) in
                let id = "z\(index)"
                let version = experiment.variants[experiment.arm(for: id)].version
                let kind =
                    version == 2 && index % 2 == 0 ? #""kind": "crash""# : #""kind": "inference", "latency_ms": 3"#
                return ("e\(index)", id, version, kind)
            }
            let reply = try await Self.post(client, Self.batch(events))
            #expect(reply.json["stopped"] as? Bool == true, "\(reply.text)")
            let detail = try await Self.call(client, "/v1/models/m/experiments/\(experiment.id)")
            let outcome = (detail.json["experiment"] as? [String: Any])?["outcome"] as? String ?? ""
            #expect(
                outcome.contains("guardrail crashes tripped") && outcome.contains("the baseline's 0,"), "\(outcome)")
        }
    }

    @Test("A winner that has not passed the alias's gate is not promoted, and the answer says why")
    func concludeThroughGate() async throws {
        try await HubGateRoutesTests.withGatedHub { client, _, _ in
            let started = try await Self.start(client, Self.fiftyFifty)
            let id = try #require(started.json["id"] as? Int, "\(started.text)")
            // No evaluator: every version fails its gate at once.
            let gate = try await HubGateRoutesTests.setGate(
                client, bundles: ["imagenet-sample"], rules: ["top1:threshold=0.5"])
            #expect(gate.status == 200, "\(gate.message)")
            try await Eventually.wait(for: "the failed evaluations", upTo: .seconds(60)) {
                let evaluations = try await HubGateRoutesTests.get(client, "/v1/models/m/versions/2/evaluations")
                return (evaluations["evaluations"] as? [[String: Any]])?.first?["status"] as? String == "failed"
            }
            let refused = try await Self.call(
                client, "/v1/models/m/experiments/\(id)/conclude", method: .post, body: #"{"winner": 2}"#)
            #expect(refused.status == 409 && refused.text.contains("not promoted"), "\(refused.text)")
            #expect(refused.text.contains("version 2 failed"), "\(refused.text)")
            let detail = try await Self.call(client, "/v1/models/m/experiments/\(id)")
            #expect((detail.json["experiment"] as? [String: Any])?["status"] as? String == "running")
            let steps = (detail.json["history"] as? [[String: Any]] ?? []).compactMap { $0["action"] as? String }
            #expect(steps == ["start", "conclude-refused"], "\(steps)")
        }
    }

    @Test("An A/A test: the alias serves the baseline alone, clients split into arms, and it concludes on the baseline")
    func aaTest() async throws {
        try await HubRoutesTests.withHub { client, _ in
            let body =
                #"{"alias": "production", "mode": "aa", "variants": [{"version": 1, "weight": 50}, "#
                + #"{"version": 1, "weight": 50}], "baseline": 1}"#
            let started = try await Self.start(client, body)
            #expect(started.status == 201, "\(started.text)")
            let experiment = try JSONDecoder().decode(HubExperiment.self, from: Data(started.text.utf8))
            var arms: Set<Int> = []
            var events: [(String, String, Int, String)] = []
            for index in 0..<40 {
                #expect(try await Self.resolved(client, "a\(index)") == 1)
                arms.insert(experiment.arm(for: "a\(index)"))
                events.append(("x\(index)", "a\(index)", 1, #""kind": "outcome", "name": "accepted", "success": true"#))
            }
            #expect(arms == [0, 1])
            #expect(try await Self.post(client, Self.batch(events)).json["accepted"] as? Int == 40)
            let concluded = try await Self.call(
                client, "/v1/models/m/experiments/\(experiment.id)/conclude", method: .post)
            #expect(concluded.status == 200 && concluded.json["winner"] as? Int == 1, "\(concluded.text)")
        }
    }

    /// The rate is printed, never asserted: a timed unit test fails on a loaded machine (a CI run
    /// beside the sanitized build measured 69 events/s where an idle one measures thousands).
    @Test("Every event of 20 batches of 500 from 100 clients is counted, in process on SQLite")
    func ingestionRate() async throws {
        try await HubRoutesTests.withHub { client, _ in
            let started = try await Self.start(client, Self.fiftyFifty)
            let experiment = try JSONDecoder().decode(HubExperiment.self, from: Data(started.text.utf8))
            let batches = 20
            let clock = ContinuousClock()
            let start = clock.now
            for batch in 0..<batches {
                let events = (0..<HubRoutes.eventBatchLimit).map { index in
                    let id = "r\(index % 100)"
                    return (
                        "\(batch)-\(index)", id, experiment.variants[experiment.arm(for: id)].version,
                        #""kind": "inference", "latency_ms": \#(Double(index % 40) + 1), "failed": false"#
                    )
                }
                #expect(try await Self.post(client, Self.batch(events)).json["accepted"] as? Int == events.count)
            }
            let elapsed = (clock.now - start).components
            let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
            let rate = Double(batches * HubRoutes.eventBatchLimit) / seconds
            print(
                "experiment events ingested: \(Int(rate)) events/s (\(batches) batches of \(HubRoutes.eventBatchLimit))"
            )
        }
    }
}
