import Foundation
import HTTPTypes
import HummingbirdTesting
import NetRunnerHub
import NetRunnerSupport
import NetRunnerTestSupport
import SQLKit
import Testing

@testable import NetRunnerHubServer

/// The gates' routes in process (issue 53): a rule the bundles never give is refused when the
/// gate is set, and what anonymous readers are shown of an evaluation names no file of the hub.
@Suite("Hub gates in process")
struct HubGateRoutesTests {
    /// A hub with the repository's test bundles and no evaluator (every evaluation fails at once,
    /// saying so): what is checked here is the routes, not `netrunner evaluate`.
    static func withGatedHub(
        evaluator: String = "/nonexistent/netrunner",
        _ body: @Sendable (any TestClientProtocol, HubStore, HubServer) async throws -> Void
    ) async throws {
        let configure: (inout HubServer.Configuration) -> Void = {
            $0.testBundles = Fixtures.path("TestBundles")
            $0.evaluator = evaluator
        }
        try await HubRoutesTests.withHub(configure: configure) { client, store, hub, _ in
            try await body(client, store, hub)
        }
    }

    /// A request's JSON body.
    static func get(_ client: some TestClientProtocol, _ uri: String) async throws -> [String: Any] {
        HubRoutesTests.json(try await HubRoutesTests.call(client, uri).body)
    }

    /// The `gate_flags` of an alias as `GET /v1/models/m` shows it: `["1:failed"]`.
    static func flags(_ client: some TestClientProtocol, _ alias: String = "production") async throws -> [String] {
        let aliases = try await get(client, "/v1/models/m")["aliases"] as? [[String: Any]] ?? []
        let flags = aliases.first { $0["alias"] as? String == alias }?["gate_flags"] as? [[String: Any]] ?? []
        return flags.map { "\($0["version"] as? Int ?? 0):\($0["status"] as? String ?? "")" }
    }

    static func move(_ client: some TestClientProtocol, to version: Int, force: String? = nil) async throws -> (
        status: Int, body: [String: Any]
    ) {
        let forced = force.map { #", "force": true, "reason": "\#($0)""# } ?? ""
        let reply = try await HubRoutesTests.call(
            client, "/v1/models/m/aliases/production", method: .put, headers: HubRoutesTests.adminHeaders,
            body: #"{"version": \#(version)\#(forced)}"#)
        return (reply.status, HubRoutesTests.json(reply.body))
    }

    static func setGate(_ client: some TestClientProtocol, bundles: [String], rules: [String]) async throws -> (
        status: Int, message: String
    ) {
        let body = try JSONSerialization.data(withJSONObject: ["bundles": bundles, "rules": rules])
        let reply = try await HubRoutesTests.call(
            client, "/v1/models/m/gates/production", method: .put, headers: HubRoutesTests.adminHeaders,
            body: String(decoding: body, as: UTF8.self))
        return (reply.status, HubRoutesTests.json(reply.body)["error_description"] as? String ?? "")
    }

    @Test("A rule on a metric the bundle never gives is 400, naming the rule and what the bundle gives")
    func ruleTheBundleCannotGive() async throws {
        try await Self.withGatedHub { client, _, _ in
            let detection = try await Self.setGate(client, bundles: ["imagenet-sample"], rules: ["mAP50:threshold=0.5"])
            #expect(detection.status == 400, "\(detection.message)")
            for part in ["mAP50", "imagenet-sample", "classification test", "classification_accuracy, top1, top5"] {
                #expect(detection.message.contains(part), "\(part): \(detection.message)")
            }
            // On a detection bundle, a classification metric is refused the same way.
            let faces = try await Self.setGate(client, bundles: ["faces"], rules: ["top1:threshold=0.5"])
            #expect(faces.status == 400 && faces.message.contains("mAP50, mAP50to95"), "\(faces.message)")
            // Two bundles: the rule must be given by each.
            let both = try await Self.setGate(
                client, bundles: ["imagenet-sample", "faces"],
                rules: ["latency_p50_ms:threshold=1000", "top5:threshold=0.5"])
            #expect(both.status == 400 && both.message.contains("on faces"), "\(both.message)")
            // What the bundle gives is taken, the hub's own metrics on any bundle.
            let given = try await Self.setGate(
                client, bundles: ["imagenet-sample"],
                rules: [
                    "classification_accuracy:min_absolute_change=-0.02", "agreement:threshold=0.85",
                    "size_bytes:threshold=1e9",
                ])
            #expect(given.status == 200, "\(given.message)")
            let pose = try await Self.setGate(client, bundles: ["pose-sample"], rules: ["oks:threshold=0.5"])
            #expect(pose.status == 200, "\(pose.message)")
            // Issue 54: a hexadecimal number, a key twice, recall@K with a leading zero: 400 naming the rule.
            for rule in ["top1:threshold=0x10", "top1:threshold=0.5,threshold=0.9", "recall@05:threshold=0.5"] {
                let refused = try await Self.setGate(client, bundles: ["imagenet-sample"], rules: [rule])
                #expect(refused.status == 400 && refused.message.contains(rule), "\(rule): \(refused.message)")
            }
        }
    }

    @Test("An alias pointed where it points is a 200 that changes nothing; the answer says what was forced")
    func sameTargetAndForced() async throws {
        try await Self.withGatedHub { client, _, _ in
            #expect(try await Self.move(client, to: 1).status == 200)
            let gate = try await Self.setGate(client, bundles: ["imagenet-sample"], rules: ["top1:threshold=0.5"])
            #expect(gate.status == 200, "\(gate.message)")
            // No evaluator: every version fails its gate at once, the one production serves included.
            try await Eventually.wait(for: "the failed evaluations", upTo: .seconds(180)) {
                try await Self.flags(client) == ["1:failed"]
            }
            let again = try await Self.move(client, to: 1)
            #expect(again.status == 200 && again.body["unchanged"] as? Bool == true, "\(again.body)")
            let history = try await Self.get(client, "/v1/models/m/aliases/production/history")
            #expect((history["history"] as? [Any])?.count == 1)
            // Another version is refused, then forced: the answer says the hub forced it, and why.
            let refused = try await Self.move(client, to: 2)
            #expect(refused.status == 409, "\(refused.body)")
            let forced = try await Self.move(client, to: 2, force: "the kiosk")
            #expect(forced.status == 200 && forced.body["forced"] as? Bool == true, "\(forced.body)")
            #expect(forced.body["reason"] as? String == "the kiosk" && forced.body["unchanged"] == nil)
            #expect(try await Self.flags(client) == ["2:failed"])
            let alias = try await Self.get(client, "/v1/models/m/aliases/production")
            #expect((alias["gate_flags"] as? [[String: Any]])?.first?["status"] as? String == "failed")
            // A move no gate needed forcing is recorded as not forced, the reason not kept.
            let canary = try await HubRoutesTests.call(
                client, "/v1/models/m/aliases/canary", method: .put, headers: HubRoutesTests.adminHeaders,
                body: #"{"version": 1, "force": true, "reason": "not needed"}"#)
            let body = HubRoutesTests.json(canary.body)
            #expect(canary.status == 200 && body["forced"] as? Bool == false && body["reason"] == nil, "\(body)")
        }
    }

    @Test("A version an older node published and moved a gated alias to is flagged, then queued at start")
    func olderNodesVersion() async throws {
        try await Self.withGatedHub { client, store, hub in
            #expect(try await Self.move(client, to: 1).status == 200)
            #expect(
                try await Self.setGate(client, bundles: ["imagenet-sample"], rules: ["top1:threshold=0.5"]).status
                    == 200)
            // Both versions' evaluations over (the pass, and the look for unevaluated versions
            // after it, done before the older node's version below: the evaluations' store
            // operations wait behind requests, so version 2's may still be running at 1's).
            try await Eventually.wait(for: "the evaluations", upTo: .seconds(180)) {
                let evaluations = try await Self.get(client, "/v1/models/m/versions/2/evaluations")
                let second = (evaluations["evaluations"] as? [[String: Any]])?.first?["status"] as? String
                return try await Self.flags(client) == ["1:failed"] && second == "failed"
            }
            // What a node of 0.1.0 does: a version published with no evaluation queued, and the
            // gated alias moved to it unchecked.
            let bytes = Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 * 7) })
            _ = try await store.publish(
                name: "m", sha256: SHA256.hexDigest(of: bytes), size: bytes.count, format: "tflite",
                task: "classification", modelID: "m", description: "published by an older node", by: "old",
                alias: nil)
            try await store.database.raw("DELETE FROM hub_evaluations WHERE name = 'm' AND version = 3").run()
            _ = try await HubStore.setAlias(
                store.database, name: "m", alias: "production", targets: [HubAliasTarget(version: 3)], by: "old",
                action: "set-by-an-older-node")
            #expect(try await Self.flags(client) == ["3:unevaluated"])
            // The production alias's version describes the model, and the answer says which.
            let model = try await Self.get(client, "/v1/models/m")
            #expect(model["description"] as? String == "published by an older node")
            #expect(model["description_version"] as? Int == 3)
            // A start (here a second application on the same store, as another node's) queues it.
            try await hub.buildApplication(store: store, database: nil).test(.router) { _ in
                try await Eventually.wait(for: "version 3 evaluated", upTo: .seconds(180)) {
                    try await Self.flags(client) == ["3:failed"]
                }
            }
            #expect(try await store.queueUnevaluated().isEmpty)
        }
    }

    @Test("What an evaluation that could not run says names no path of the hub's")
    func messagesWithoutPaths() async throws {
        let folder = try TemporaryFolder(prefix: "netrunner-evaluator")
        defer { folder.remove() }
        // An evaluator that fails, printing every path it was given, as a crash's log would.
        let script = try folder.write(Data("#!/bin/sh\necho \"cannot read $*\"\nexit 3\n".utf8), named: "netrunner")
        chmod(script, 0o755)
        try await Self.withGatedHub(evaluator: script) { client, _, _ in
            #expect(
                try await Self.setGate(client, bundles: ["imagenet-sample"], rules: ["top1:threshold=0.5"]).status
                    == 200)
            var message = ""
            try await Eventually.wait(for: "the failed evaluation", upTo: .seconds(180)) {
                let list = try await Self.get(client, "/v1/models/m/versions/2/evaluations")
                message = (list["evaluations"] as? [[String: Any]])?.first?["message"] as? String ?? ""
                return !message.isEmpty
            }
            #expect(
                message.contains("candidate-v2.tflite") && message.contains("imagenet-sample.testbundle"), "\(message)")
            #expect(!message.contains("/"), "\(message)")
        }
        #expect(
            GateMessages.scrubbed("Error: /var/lib/hub/data/x/models/candidate-v3.tflite: no such file.")
                == "Error: candidate-v3.tflite: no such file.")
        #expect(GateMessages.scrubbed("3/4 images, http://host/path") == "3/4 images, http://host/path")
    }

    @Test("A version of another task than the model's is refused, naming both, unless asked for")
    func taskChange() async throws {
        try await Self.withGatedHub { client, store, _ in
            let bytes = Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 * 11) })
            let digest = SHA256.hexDigest(of: bytes)
            let refused = await #expect(throws: HubError.self) {
                _ = try await store.publish(
                    name: "m", sha256: digest, size: bytes.count, format: "tflite", task: "embedding", modelID: "e",
                    description: "an embedder", by: "admin", alias: nil)
            }
            let text = refused.map { "\($0)" } ?? ""
            #expect(
                text.contains("classification task") && text.contains("embedding task")
                    && text.contains("--allow-task-change"), "\(text)")
            if case .conflict? = refused {} else { Issue.record("not a 409: \(text)") }
            let (version, _) = try await store.publish(
                name: "m", sha256: digest, size: bytes.count, format: "tflite", task: "embedding", modelID: "e",
                description: "an embedder", by: "admin", alias: nil, allowTaskChange: true)
            #expect(version.version == 3 && version.task == "embedding")
            // The route's flag is true or false, anything else 400.
            let odd = try await HubRoutesTests.call(
                client, "/v1/models/m/versions?allow_task_change=maybe", method: .post,
                headers: HubRoutesTests.adminHeaders, body: "x")
            #expect(odd.status == 400)
        }
    }
}
