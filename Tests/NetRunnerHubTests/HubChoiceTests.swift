import Foundation
import NetRunner
import NetRunnerTestSupport
import Testing

@testable import NetRunnerHub

/// How a program chooses its hub in code (not only through `NETRUNNER_HUB`), as docs/hub.md's
/// ML Kit example shows, and a bundle folder pushed from code.
@Suite("ML Kit: the hub chosen in code", .serialized)
struct HubChoiceTests {
    static let coffee = Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")

    @Test("docs/hub.md's ML Kit example names its hub and key in code")
    func documented() throws {
        let guide = try String(contentsOfFile: Fixtures.path("docs/hub.md"), encoding: .utf8)
        let blocks = guide.components(separatedBy: "```swift\n").dropFirst().map {
            $0.components(separatedBy: "```").first ?? ""
        }
        let example = try #require(blocks.first { $0.contains("ModelDownloader") }, "the ML Kit example")
        #expect(example.contains("HubClient(address: \"https://hub.example.org\""), "\(example)")
        #expect(example.contains("ModelDownloader.modelDownloader(hub: hub"), "\(example)")
        #expect(example.contains("ModelManager.modelManager(downloader: downloader)"), "\(example)")
    }

    @Test("A downloader given HubClient(address:token:) asks that hub; a folder pushed from code comes back a bundle")
    func chosenHub() async throws {
        let folder = try TemporaryFolder(prefix: "netrunner-hub-choice")
        defer { folder.remove() }
        try await InProcessHub.run(data: folder.path("data"), anonymousRead: false) { hub in
            try await chosenHub(hub: hub, folder: folder)
        }
    }

    private func chosenHub(hub: InProcessHub, folder: TemporaryFolder) async throws {
        let publisher = HubClient(address: hub.address, token: HubProcess.adminKey)
        let bundle = Fixtures.path("Tests/Fixtures/Bundles/mobilenet_v2_1.0_224_float32.tiobundle")
        let published = try await publisher.push(file: bundle, name: "flowers", alias: "production")
        #expect(published.version == 1 && published.format == "zip" && published.task == "classification")

        // As the guide shows: the hub and key in code, whatever NETRUNNER_HUB says.
        let downloader = ModelDownloader.modelDownloader(
            hub: HubClient(address: hub.address, token: HubProcess.adminKey),
            cache: HubCache(folder: folder.path("cache")))
        let manager = ModelManager.modelManager(downloader: downloader)
        #expect(manager.downloader.hub.address == hub.address)
        let model = try await downloader.getModel(name: "flowers@production")
        #expect(model.version == 1 && model.hash == published.sha256)
        let zipped = try ZippedModelBundle(zipAt: model.path)
        let classifier = try ImageClassifier(bundle: zipped.bundle)
        #expect(try classifier.classify(fileAt: Self.coffee).categories.first?.displayName == "espresso")

        // Without the key, the private hub says so (the key went in code, not in the address).
        let anonymous = ModelDownloader.modelDownloader(
            hub: HubClient(address: hub.address, token: ""), cache: HubCache(folder: folder.path("other")))
        await #expect(throws: HubClientError.self) { try await anonymous.getModel(name: "flowers") }
    }
}
