import Foundation
import NetRunner
import NetRunnerTestSupport
import Synchronization
import Testing

@testable import NetRunnerHub

/// The ML Kit seed's code, as written there, against a local hub: a remote model by name, a
/// download under conditions with progress and success events, "is it downloaded?", the local
/// model until then, and the newer `ModelDownloader.getModel` with its three download types.
@Suite("ML Kit's custom-model API against a local hub", .serialized)
struct MLKitTests {
    static let tflite = "Models/mobilenet_v2_1.0_224_uint8_metadata.tflite"
    static let coffee = Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")

    @Test("ModelManager: not downloaded (local model used), download with events, downloaded, classifies")
    func modelManager() async throws {
        let folder = try TemporaryFolder(prefix: "netrunner-mlkit")
        defer { folder.remove() }
        try await InProcessHub.run(data: folder.path("data")) { hub in
            try await modelManager(hub: hub, folder: folder)
        }
    }

    private func modelManager(hub: InProcessHub, folder: TemporaryFolder) async throws {
        let client = HubClient(address: hub.address, token: HubProcess.adminKey)
        let published = try await client.push(file: Fixtures.path(Self.tflite), name: "flowers", alias: "production")
        #expect(published.version == 1 && published.task == "classification")

        let manager = ModelManager.modelManager(
            downloader: ModelDownloader(
                hub: HubClient(address: hub.address), cache: HubCache(folder: folder.path("cache"))))
        let remote = CustomRemoteModel(name: "flowers@production")
        let local = CustomLocalModel(modelPath: Fixtures.path("Models/mobilenet_v2_1.0_224_int8.tflite"))
        #expect(!manager.isModelDownloaded(remote))
        #expect(manager.modelPath(remote, fallback: local) == local.modelPath)

        let seen = Mutex<[ModelDownloadEvent]>([])
        let events = manager.events
        let listener = Task {
            for await event in events {
                seen.withLock { $0.append(event) }
                if case .didSucceed = event { break }
            }
        }
        let conditions = ModelDownloadConditions(allowsCellularAccess: true, requiresACPower: false)
        let progress = manager.download(remote, conditions: conditions)
        let model = try await progress.value()
        await listener.value
        #expect(progress.fractionCompleted == 1)
        #expect(model.version == 1 && model.size == 4_059_384)
        #expect(model.hash == "f3594f132b91cffd0b45c85f33056564e98c4125c107ea964de7d5accf1dacae")
        #expect(manager.isModelDownloaded(remote))
        #expect(manager.modelPath(remote, fallback: local) == model.path)
        let received = seen.withLock { $0 }
        #expect(received.first == .started(name: "flowers@production", version: 1, totalBytes: 4_059_384))
        #expect(
            received.contains(.progress(name: "flowers@production", receivedBytes: 4_059_384, totalBytes: 4_059_384)))
        #expect(received.last == .didSucceed(model))

        let classifier = try ImageClassifier(model: LoadedModel(.path(model.path)))
        #expect(try classifier.classify(fileAt: Self.coffee).categories.first?.displayName == "espresso")
    }

    @Test("ModelDownloader: latest (304 keeps the copy), local without the network, prefer offline, conditions")
    func modelDownloader() async throws {
        let folder = try TemporaryFolder(prefix: "netrunner-mlkit")
        defer { folder.remove() }
        try await InProcessHub.run(data: folder.path("data")) { hub in
            try await modelDownloader(hub: hub, folder: folder)
        }
    }

    private func modelDownloader(hub: InProcessHub, folder: TemporaryFolder) async throws {
        let client = HubClient(address: hub.address, token: HubProcess.adminKey)
        _ = try await client.push(file: Fixtures.path(Self.tflite), name: "flowers")
        let downloader = ModelDownloader.modelDownloader(
            hub: HubClient(address: hub.address), cache: HubCache(folder: folder.path("cache")))

        // Conditions that do not hold now: no download, a clear reason.
        var closed = ModelDownloadConditions()
        let hour = Calendar.current.component(.hour, from: Date())
        closed.allowedHours = .init(start: (hour + 1) % 24, end: (hour + 2) % 24)
        await #expect {
            try await downloader.getModel(name: "flowers", downloadType: .latestModel, conditions: closed)
        } throws: { error in
            "\(error)".hasPrefix("Not downloading now: downloads are allowed from")
        }

        let first = try await downloader.getModel(name: "flowers", downloadType: .latestModel)
        #expect(first.version == 1)
        let again = try await downloader.getModel(name: "flowers", downloadType: .latestModel)
        #expect(again == first)
        #expect(downloader.listDownloadedModels() == [first])

        // A new version: latest gets it, the old file stays for whoever uses it.
        _ = try await client.push(file: Fixtures.path("Models/mobilenet_v2_1.0_224_int8.tflite"), name: "flowers")
        let newer = try await downloader.getModel(name: "flowers", downloadType: .localModelUpdateInBackground)
        #expect(newer == first, "the local copy at once")
        let latest = try await downloader.getModel(name: "flowers", downloadType: .latestModel)
        #expect(latest.version == 2 && FileManager.default.fileExists(atPath: first.path))

        // The hub gone: local and latest both answer with the verified copy; nothing cached fails clearly.
        await hub.stop()
        #expect(try await downloader.getModel(name: "flowers", downloadType: .localModel) == latest)
        let offline = try await downloader.getModel(name: "flowers", downloadType: .latestModel)
        #expect(offline == latest && latest.fallbackReason == nil)
        #expect(offline.fallbackReason?.contains("cannot be reached") == true, "said, as ML Kit's fallback is explicit")
        await #expect(throws: HubClientError.self) {
            try await downloader.getModel(name: "tulips", downloadType: .latestModel)
        }
        downloader.deleteDownloadedModel(latest)
        #expect(downloader.listDownloadedModels().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: latest.path))
    }

    @Test("Versions with the same bytes: the copy is kept (304) and named as the version the reference names now")
    func sameBytesNewVersion() async throws {
        let folder = try TemporaryFolder(prefix: "netrunner-mlkit")
        defer { folder.remove() }
        try await InProcessHub.run(data: folder.path("data")) { hub in
            let client = HubClient(address: hub.address, token: HubProcess.adminKey)
            let file = Fixtures.path(Self.tflite)
            _ = try await client.push(file: file, name: "flowers", alias: "production")
            let downloader = ModelDownloader(
                hub: HubClient(address: hub.address), cache: HubCache(folder: folder.path("cache")))
            let first = try await downloader.getModel(name: "flowers", downloadType: .latestModel)
            let production = try await downloader.getModel(name: "flowers@production", downloadType: .latestModel)
            #expect(first.version == 1 && production.version == 1)

            // The same file published again: version 2, the same digest, the alias moved to it.
            let again = try await client.push(file: file, name: "flowers", alias: "production")
            #expect(again.version == 2 && again.sha256 == first.hash)
            let latest = try await downloader.getModel(name: "flowers", downloadType: .latestModel)
            #expect(latest.version == 2 && latest.path == first.path, "the cached file, named as the version asked for")
            let moved = try await downloader.getModel(name: "flowers@production", downloadType: .latestModel)
            #expect(moved.version == 2)
            #expect(try await downloader.getModel(name: "flowers@1", downloadType: .latestModel).version == 1)
            // What is recorded says so too: the local copy and the list name version 2.
            #expect(try await downloader.getModel(name: "flowers", downloadType: .localModel).version == 2)
            #expect(downloader.listDownloadedModels().map(\.version) == [2])

            // Back to 1: named 1 again.
            _ = try await client.setAlias("production", model: "flowers", targets: [HubAliasTarget(version: 1)])
            #expect(try await downloader.getModel(name: "flowers@production", downloadType: .latestModel).version == 1)
        }
    }

    @Test("The version a hub's Content-Location names, for this model only")
    func contentLocation() {
        #expect(HubClient.version(in: "/v1/models/flowers/versions/7", model: "flowers") == 7)
        #expect(HubClient.version(in: "https://hub.example/base/v1/models/flowers/versions/12", model: "flowers") == 12)
        #expect(HubClient.version(in: "/v1/models/tulips/versions/7", model: "flowers") == nil)
        #expect(HubClient.version(in: "/v1/models/flowers/versions/0", model: "flowers") == nil)
        #expect(HubClient.version(in: "/v1/models/flowers/versions/99999999999", model: "flowers") == nil)
        #expect(HubClient.version(in: "/v1/blobs/sha256:00", model: "flowers") == nil)
        #expect(ModelDownloader.versionNumber("7") == 7 && ModelDownloader.versionNumber("production") == nil)
        #expect(ModelDownloader.versionNumber("sha256:ab") == nil && ModelDownloader.versionNumber("") == nil)
    }

    @Test("Conditions read Linux's own signals: mains power from sysfs, hour windows that wrap midnight")
    func conditions() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-power")
        defer { folder.remove() }
        func supply(_ name: String, type: String, online: String?) throws {
            try FileManager.default.createDirectory(atPath: folder.path(name), withIntermediateDirectories: true)
            try Data(type.utf8).write(to: URL(fileURLWithPath: folder.path(name + "/type")))
            if let online { try Data(online.utf8).write(to: URL(fileURLWithPath: folder.path(name + "/online"))) }
        }
        var conditions = ModelDownloadConditions(requiresACPower: true)
        conditions.powerSupplyFolder = folder.url.path
        #expect(conditions.unmetReason() == nil, "no battery: always powered")
        try supply("BAT0", type: "Battery\n", online: nil)
        try supply("AC", type: "Mains\n", online: "0\n")
        #expect(conditions.unmetReason()?.contains("runs on battery") == true)
        try Data("1\n".utf8).write(to: URL(fileURLWithPath: folder.path("AC/online")))
        #expect(conditions.unmetReason() == nil)
        let night = ModelDownloadConditions.HourWindow(start: 22, end: 6)
        #expect(
            night.contains(23) && night.contains(0) && night.contains(5) && !night.contains(6) && !night.contains(12))
    }
}
