import Foundation
import NetRunnerTestSupport
import Testing

@testable import NetRunnerHub

/// An upload whose connection closes before the answer may or may not have been published: the
/// client asks the hub for a version with the file's digest, and sends the upload once more
/// only when there is none.
@Suite("Hub push when the connection closes before the answer")
struct HubPushRetryTests {
    static let file = Fixtures.path("Models/mobilenet_v2_1.0_224_uint8.tflite")

    static func model(versions: [[String: Any]]) -> [String: Any] {
        [
            "name": "m", "description": "", "latest_version": versions.isEmpty ? NSNull() : 3, "versions": versions,
            "aliases": [], "created_at": "2026-11-24T00:00:00Z",
        ]
    }

    static func version(sha256: String) -> [String: Any] {
        [
            "name": "m", "version": 3, "sha256": sha256, "size": 4, "format": "tflite", "task": "classification",
            "model_id": "m", "description": "", "created_at": "2026-11-24T00:00:00Z", "created_by": "admin",
        ]
    }

    @Test("Published after all: the hub's version with the file's digest is the answer, the upload sent once")
    func publishedAfterAll() async throws {
        let folder = try TemporaryFolder(prefix: "netrunner-push-retry")
        defer { folder.remove() }
        let hub = try FakeHub(folder: folder.path("fake"))
        defer { hub.stop() }
        let digest = try #require(HubClient.digest(ofFileAt: Self.file))
        try hub.script([
            "/v1/models/m/versions": ["close_after_body": true],
            "/v1/models/m": ["json": Self.model(versions: [Self.version(sha256: digest)])],
        ])
        let published = try await HubClient(address: hub.address, token: "key").push(file: Self.file, name: "m")
        #expect(published.version == 3 && published.sha256 == digest)
        #expect(hub.received().filter { $0.method == "POST" }.count == 1, "\(hub.received())")
    }

    @Test("Not published: the upload is sent once more, then the error says the connection closed")
    func notPublished() async throws {
        let folder = try TemporaryFolder(prefix: "netrunner-push-retry")
        defer { folder.remove() }
        let hub = try FakeHub(folder: folder.path("fake"))
        defer { hub.stop() }
        try hub.script([
            "/v1/models/m/versions": ["close_after_body": true],
            "/v1/models/m": ["json": Self.model(versions: [Self.version(sha256: String(repeating: "0", count: 64))])],
        ])
        await #expect {
            try await HubClient(address: hub.address, token: "key").push(file: Self.file, name: "m")
        } throws: { error in
            "\(error)".contains("closed the connection")
        }
        #expect(hub.received().filter { $0.method == "POST" }.count == 2, "\(hub.received())")
    }
}
