import Foundation
import NetRunner
import NetRunnerTestSupport
import Testing

@testable import NetRunnerHub

/// Issue 56's end-to-end run: 200 simulated clients, each with its own client id, get the
/// model through ML Kit's `ModelDownloader`, classify the repository's labelled photos with the
/// version their id is assigned, and report through `ExperimentReporter` whether the top-1 was
/// the photo's label (the goal) and each inference's latency. The hub names the better model,
/// and concluding makes it the alias's target through the alias's gate; then a third version that crashes one client in
/// three is stopped by its crash guardrail, and the alias put back, with nobody acting.
///
/// Each (version, photo) is classified once through the library and its answer and latency
/// reused by the clients given that version (the answers are deterministic; 800 inferences of
/// the float model would take minutes of a debug build on two cores).
@Suite("An experiment end to end: 200 clients, two real models, a guardrail", .serialized)
struct ExperimentEndToEndTests {
    static let strong = Fixtures.path("Models/bundles/mobilenet_v2_1.0_224_float32.tiobundle")
    static let weak = Fixtures.path("Tests/Fixtures/Gates/mobilenet_v1_0.25_128_quant.tiobundle")
    static let testBundle = Fixtures.path("TestBundles/imagenet-sample.testbundle")

    /// The test bundle's photos and the labels that count as right for each.
    static func labelledPhotos() throws -> [(path: String, labels: Set<String>)] {
        struct Test: Decodable {
            struct Label: Decodable {
                var path: String
                var results: [String: [String: String]]

                enum CodingKeys: String, CodingKey {
                    case path
                    case results = "inference_results"
                }
            }
            var labels: [Label]
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: testBundle + "/test.json"))
        return try JSONDecoder().decode(Test.self, from: data).labels.map {
            (testBundle + "/" + $0.path, Set(($0.results["classification"] ?? [:]).keys))
        }
    }

    /// What one version answers: per photo, whether its top-1 is a label, and the latency.
    final class Answers: @unchecked Sendable {
        var byVersion: [Int: [Int: (right: Bool, latency: Duration)]] = [:]
        var classifiers: [Int: ImageClassifier] = [:]

        func answer(version: Int, model: CustomModel, photo: Int, of photos: [(path: String, labels: Set<String>)])
            throws -> (right: Bool, latency: Duration)
        {
            if let known = byVersion[version]?[photo] { return known }
            let classifier = try classifiers[version] ?? ImageClassifier(model: LoadedModel(.path(model.path)))
            if classifiers[version] == nil {
                // Warmed up first, as an app's first inference is not what it measures.
                _ = try classifier.classify(fileAt: photos[photo].path)
                classifiers[version] = classifier
            }
            let clock = ContinuousClock()
            let started = clock.now
            let best = try classifier.classify(fileAt: photos[photo].path).categories.first
            let latency = clock.now - started
            let answer = (photos[photo].labels.contains(best?.displayName ?? best?.label ?? ""), latency)
            byVersion[version, default: [:]][photo] = answer
            return answer
        }
    }

    /// A client's photos: 4 of the 8, chosen by its number (fixed, so the run is the same).
    static func photos(of client: Int) -> [Int] {
        var state = UInt64(client) &* 0x9E37_79B9_7F4A_7C15 &+ 1
        var chosen: [Int] = []
        while chosen.count < 4 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let photo = Int((state >> 33) % 8)
            if !chosen.contains(photo) { chosen.append(photo) }
        }
        return chosen
    }

    /// Runs clients `range` against `production`: each downloads its version, classifies its
    /// photos, reports, and sends its queue. A client given version `crashing` whose number is
    /// a multiple of 3 crashes at its first inference and reports the crash at its next start
    /// (a build with a crash problem).
    static func runClients(
        _ range: Range<Int>, hub: InProcessHub, folder: TemporaryFolder, answers: Answers,
        photos: [(path: String, labels: Set<String>)], key: String, crashing: Int? = nil
    ) async throws -> [Int: Int] {
        var assigned: [Int: Int] = [:]
        let cache = HubCache(folder: folder.path("cache"))
        for client in range {
            let id = "client-\(client)"
            let downloader = ModelDownloader(hub: HubClient(address: hub.address), cache: cache, client: id)
            let model = try await downloader.getModel(name: "flowers@production")
            assigned[model.version, default: 0] += 1
            let reporter = try ExperimentReporter(
                hub: HubClient(address: hub.address, token: key), model: "flowers", alias: "production", client: id,
                folder: folder.path("queues/\(client)"))
            if model.version == crashing, client % 3 == 0 {
                reporter.recordCrash(version: model.version)
                _ = try await reporter.flush()
                continue
            }
            for photo in Self.photos(of: client) {
                let answer = try answers.answer(version: model.version, model: model, photo: photo, of: photos)
                reporter.recordInference(version: model.version, latency: answer.latency)
                reporter.recordOutcome("accepted", success: answer.right, version: model.version)
            }
            let counts = try await reporter.flush()
            // Every event counted, or refused, or (once a guardrail stopped the experiment: 409)
            // discarded; none left queued.
            #expect(counts.accepted + counts.refused + counts.discarded == 8 && counts.queued == 0, "\(id): \(counts)")
        }
        return assigned
    }

    @Test("The better model is named and promoted; a crashing third version is stopped by its guardrail")
    func endToEnd() async throws {
        let folder = try TemporaryFolder(prefix: "netrunner-experiment")
        defer { folder.remove() }
        let photos = try Self.labelledPhotos()
        #expect(photos.count == 8)
        let bundles = Fixtures.path("TestBundles")
        try await InProcessHub.run(data: folder.path("data"), testBundles: bundles) { hub in
            let admin = HubClient(address: hub.address, token: HubProcess.adminKey)
            // Production runs the weak model, behind a gate: no version may score less top-1 on
            // the sample photos than production does. The float MobileNet V2 is the candidate,
            // evaluated against the gate as it is published (`netrunner evaluate`, a child).
            #expect(try await admin.push(file: Self.weak, name: "flowers", alias: "production").version == 1)
            _ = try await admin.setGate(
                "production", model: "flowers", bundles: ["imagenet-sample"],
                rules: [try HubGateRule(parsing: "classification_accuracy:min_absolute_change=0")])
            #expect(try await admin.push(file: Self.strong, name: "flowers").version == 2)
            let first = try await Self.start(admin, 1, against: 2, HubExperimentGuardrails(failureRate: 0.05))
            let answers = Answers()
            // The key an application carries: it may report, and do nothing else.
            let key = try await admin.createKey(name: "app", scope: .report)
            let assigned = try await Self.runClients(
                0..<200, hub: hub, folder: folder, answers: answers, photos: photos, key: key)
            #expect(assigned[1, default: 0] > 60 && assigned[2, default: 0] > 60, "\(assigned)")

            // The hub's figures are the clients' own: each arm's goal rate over what it reported.
            let detail = try await admin.experiment(first.id, model: "flowers")
            for arm in detail.analysis.arms {
                var (right, total) = (0, 0)
                for client in 0..<200 where Self.arm(of: client, in: first) == arm.arm {
                    for photo in Self.photos(of: client) {
                        total += 1
                        if answers.byVersion[arm.version]?[photo]?.right == true { right += 1 }
                    }
                }
                #expect(arm.outcomes == total && abs(arm.goalRate - Double(right) / Double(total)) < 1e-9, "\(arm)")
                #expect(arm.clients == assigned[arm.version] && arm.inferences == total, "\(arm)")
            }
            let candidate = try #require(detail.analysis.arms.first { $0.version == 2 })
            let baseline = try #require(detail.analysis.arms.first { $0.version == 1 })
            print(
                "Experiment \(first.id): v1 (weak) \(baseline.goalRate) over \(baseline.outcomes), "
                    + "v2 (float) \(candidate.goalRate) over \(candidate.outcomes); chance to beat "
                    + "\(candidate.chanceToBeatBaseline ?? -1), decision \(candidate.decision ?? "none")")
            #expect(candidate.goalRate > baseline.goalRate + 0.2)
            #expect(candidate.decision == "winner" && (candidate.chanceToBeatBaseline ?? 0) > 0.99, "\(candidate)")
            // Concluded without naming the winner: the hub's winner becomes the target, once it
            // has passed the gate (until then the conclusion is refused, and says why).
            try await Eventually.wait(for: "version 2's gate evaluation", upTo: .seconds(600)) {
                try await admin.evaluations(model: "flowers", version: 2).contains { $0.status != .pending }
            }
            let evaluation = try #require(try await admin.evaluations(model: "flowers", version: 2).first)
            #expect(evaluation.status == .passed && evaluation.baseline == 1, "\(evaluation)")
            // What `netrunner evaluate` scored on the sample's top-1, as the gate tests have it.
            #expect(evaluation.metrics["imagenet-sample"]?["classification_accuracy"] == 0.875, "\(evaluation)")
            #expect(evaluation.baselineMetrics["imagenet-sample"]?["classification_accuracy"] == 0.625)
            let concluded = try await admin.concludeExperiment(first.id, model: "flowers")
            #expect(concluded.winner == 2 && concluded.status == .concluded, "\(concluded)")
            #expect(try await admin.resolve("flowers", reference: "production", client: "anyone")?.version == 2)

            // A third version, the same model, that crashes a third of its clients (a margin of 5%).
            #expect(try await admin.push(file: Self.strong, name: "flowers").version == 3)
            let second = try await Self.start(admin, 2, against: 3, HubExperimentGuardrails(crashes: 0.05))
            _ = try await Self.runClients(
                200..<400, hub: hub, folder: folder, answers: answers, photos: photos, key: key,
                crashing: 3)
            let stopped = try await admin.experiment(second.id, model: "flowers")
            #expect(stopped.experiment.status == .stopped && stopped.experiment.endedBy == "experiment", "\(stopped)")
            let crashing = try #require(stopped.analysis.arms.first { $0.version == 3 })
            #expect(crashing.guardrails.contains { $0.metric == "crashes" && $0.tripped }, "\(crashing.guardrails)")
            for client in 0..<20 {
                let version = try await admin.resolve("flowers", reference: "production", client: "after-\(client)")
                #expect(version?.version == 2)
            }
            let history = try await admin.history(of: "production", model: "flowers")
            #expect(
                history.last?.changedBy == "experiment" && history.last?.targets.map(\.version) == [2], "\(history)")
            print("Experiment \(second.id) stopped by itself: \(stopped.experiment.outcome ?? "")")
        }
    }

    /// Starts an experiment on `production`: `baseline` and `candidate` at 50:50, the goal
    /// `accepted`.
    static func start(
        _ admin: HubClient, _ baseline: Int, against candidate: Int, _ guardrails: HubExperimentGuardrails
    ) async throws -> HubExperiment {
        try await admin.startExperiment(
            HubExperiment(
                id: 0, name: "flowers", alias: "production",
                variants: [
                    HubAliasTarget(version: baseline, weight: 50), HubAliasTarget(version: candidate, weight: 50),
                ],
                baseline: baseline, goal: "accepted", guardrails: guardrails, startedAt: "", startedBy: ""))
    }

    /// Which arm a client is in: the experiment's own assignment.
    static func arm(of client: Int, in experiment: HubExperiment) -> Int {
        experiment.arm(for: "client-\(client)")
    }
}
