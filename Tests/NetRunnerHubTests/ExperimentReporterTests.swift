import Foundation
import NetRunner
import NetRunnerTestSupport
import Testing

@testable import NetRunnerHub

/// The client side of an experiment (issue 56): `ExperimentReporter` against a live hub in
/// process. Events are recorded to a bounded queue on disk, sent in batches, counted once when
/// sent again, kept while the hub cannot be reached, sent by the next reporter after a process
/// ends, and refused batches do not fill the queue.
@Suite("Reporting experiment events from a client", .serialized)
struct ExperimentReporterTests {
    static let tflite = Fixtures.path("Models/mobilenet_v2_1.0_224_uint8_metadata.tflite")

    /// A hub with model `flowers` in two versions and an experiment on `production` at 50:50,
    /// and the version client `c1` is given.
    static func withExperiment(
        _ body: (_ hub: InProcessHub, _ folder: TemporaryFolder, _ version: Int) async throws -> Void
    ) async throws {
        let folder = try TemporaryFolder(prefix: "netrunner-reporter")
        defer { folder.remove() }
        try await InProcessHub.run(data: folder.path("data")) { hub in
            let admin = HubClient(address: hub.address, token: HubProcess.adminKey)
            _ = try await admin.push(file: tflite, name: "flowers", alias: "production")
            _ = try await admin.push(file: tflite, name: "flowers")
            let draft = HubExperiment(
                id: 0, name: "flowers", alias: "production", description: "",
                variants: [
                    HubAliasTarget(version: 1, weight: 50), HubAliasTarget(version: 2, weight: 50),
                ], baseline: 1, goal: "accepted", guardrails: HubExperimentGuardrails(), alpha: 0.05, mode: .normal,
                startedAt: "", startedBy: "")
            _ = try await admin.startExperiment(draft)
            let version = try #require(try await admin.resolve("flowers", reference: "production", client: "c1"))
                .version
            try await body(hub, folder, version)
        }
    }

    static func reporter(_ hub: String, _ folder: TemporaryFolder, maximumQueued: Int = 10_000) throws
        -> ExperimentReporter
    {
        try ExperimentReporter(
            hub: HubClient(address: hub, token: HubProcess.adminKey), model: "flowers", alias: "production",
            client: "c1", folder: folder.path("queue"), maximumQueued: maximumQueued)
    }

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    static func queueFiles(_ folder: TemporaryFolder) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path("queue"))) ?? [])
            .filter { $0.hasSuffix(".jsonl") }.sorted()
    }

    @Test("Recorded events reach the hub in batches of 500; a batch sent again counts once")
    func sentOnce() async throws {
        try await Self.withExperiment { hub, folder, version in
            var kept: [(String, Data)] = []
            do {
                let reporter = try Self.reporter(hub.address, folder)
                for index in 0..<1_200 {
                    reporter.recordOutcome(success: index % 4 != 0, version: version)
                }
                reporter.recordInference(version: version, latency: .milliseconds(12))
                #expect(reporter.counts.queued == 1_201)
                // Two files are full; the third is closed by the flush.
                #expect(Self.queueFiles(folder).count == 3)
                // As a process killed after the hub counted its batches, before it deleted them.
                for name in Self.queueFiles(folder) {
                    kept.append((name, try Data(contentsOf: URL(fileURLWithPath: folder.path("queue/" + name)))))
                }
                let counts = try await reporter.flush()
                #expect(counts.accepted == 1_201 && counts.queued == 0 && counts.duplicates == 0, "\(counts)")
                #expect(Self.queueFiles(folder).isEmpty)
            }
            for (name, data) in kept { try data.write(to: URL(fileURLWithPath: folder.path("queue/" + name))) }
            let next = try Self.reporter(hub.address, folder)
            #expect(next.counts.queued == 1_201)
            let again = try await next.flush()
            #expect(again.accepted == 0 && again.duplicates == 1_201 && again.queued == 0, "\(again)")
            let detail = try await HubClient(address: hub.address).experiment(1, model: "flowers")
            let arm = try #require(detail.analysis.arms.first { $0.version == version })
            #expect(arm.outcomes == 1_200 && arm.inferences == 1 && arm.clients == 1, "\(arm)")
            #expect(abs(arm.goalRate - 0.75) < 1e-9)
        }
    }

    @Test("Offline the queue is kept; a line cut off by a kill is skipped; the next reporter sends the rest")
    func offlineAndKilled() async throws {
        try await Self.withExperiment { hub, folder, version in
            do {
                // Nothing listens on port 1: the hub cannot be reached.
                let offline = try Self.reporter("http://127.0.0.1:1", folder)
                for _ in 0..<20 { offline.recordOutcome(success: true, version: version) }
                await #expect(throws: HubClientError.self) { try await offline.flush() }
                #expect(offline.counts.queued == 20 && offline.lastFailure?.contains("Cannot reach the hub") == true)
                // A second reporter on the same queue is refused while the first lives.
                #expect(throws: HubClientError.self) { try Self.reporter(hub.address, folder) }
            }
            let name = try #require(Self.queueFiles(folder).last)
            let handle = try #require(FileHandle(forWritingAtPath: folder.path("queue/" + name)))
            handle.seekToEndOfFile()
            handle.write(Data(#"{"client": "c1", "id": "torn"#.utf8))
            try handle.close()
            let online = try Self.reporter(hub.address, folder)
            let counts = try await online.flush()
            #expect(counts.accepted == 20 && counts.queued == 0 && online.lastFailure == nil, "\(counts)")
        }
    }

    @Test("The queue's bound drops new events and counts them; a batch refused for good is discarded")
    func boundedAndDiscarded() async throws {
        try await Self.withExperiment { hub, folder, version in
            let reporter = try Self.reporter(hub.address, folder, maximumQueued: 30)
            for _ in 0..<50 { reporter.recordOutcome(success: true, version: version) }
            #expect(reporter.counts.queued == 30 && reporter.counts.dropped == 20)
            #expect(throws: HubClientError.self) {
                try ExperimentReporter(
                    hub: HubClient(address: hub.address), model: "flowers", alias: "production", client: "c2",
                    folder: folder.path("other"), maximumQueued: 0)
            }
            // The experiment stopped: its alias runs none, so the hub refuses the batch (409).
            _ = try await HubClient(address: hub.address, token: HubProcess.adminKey).stopExperiment(
                1, model: "flowers")
            let counts = try await reporter.flush()
            #expect(counts.discarded == 30 && counts.queued == 0 && counts.accepted == 0, "\(counts)")
            #expect(reporter.lastFailure?.contains("409") == true, "\(reporter.lastFailure ?? "")")
            #expect(Self.queueFiles(folder).isEmpty)
        }
    }

    @Test("Recording costs microseconds beside an inference's milliseconds, and the background loop sends")
    func overhead() async throws {
        try await Self.withExperiment { hub, folder, version in
            let reporter = try Self.reporter(hub.address, folder, maximumQueued: 100_000)
            let classifier = try ImageClassifier(model: LoadedModel(.path(Self.tflite)))
            let photo = Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")
            _ = try classifier.classify(fileAt: photo)
            let clock = ContinuousClock()
            let inferences = 20
            let plain = clock.measure { for _ in 0..<inferences { _ = try? classifier.classify(fileAt: photo) } }
            let reported = clock.measure {
                for _ in 0..<inferences {
                    let started = clock.now
                    let result = try? classifier.classify(fileAt: photo)
                    reporter.recordInference(version: version, latency: clock.now - started, failed: result == nil)
                    reporter.recordOutcome(
                        success: result?.categories.first?.displayName == "espresso", version: version)
                }
            }
            // Under the hub's 10,000 events a client a day.
            let records = 5_000
            let recording = clock.measure {
                for _ in 0..<records { reporter.recordOutcome(success: true, version: version) }
            }
            let perRecord = recording / records
            print(
                "Experiment reporting: \(Self.milliseconds(perRecord) * 1000) µs a record (\(records) records); "
                    + "an inference \(Self.milliseconds(plain / inferences)) ms alone, "
                    + "\(Self.milliseconds(reported / inferences)) ms with its two records")
            #expect(reporter.counts.queued == records + 2 * inferences && reporter.counts.dropped == 0)
            // Sent by the background loop, without a flush.
            reporter.start(every: .milliseconds(100))
            try await Eventually.wait(for: "the queue sent in the background", upTo: .seconds(120)) {
                reporter.counts.queued == 0
            }
            await reporter.stop()
            #expect(reporter.counts.accepted == records + 2 * inferences, "\(reporter.counts)")
        }
    }
}
