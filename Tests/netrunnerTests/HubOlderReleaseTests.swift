import Foundation
import NetRunnerTestSupport
import Testing

/// The client against a hub of an older release (issue 53, item 15), played by the fake hub: it
/// has no gates route (404) and answers a move without saying whether it forced anything.
@Suite("netrunner hub: against a hub of an older release")
struct HubOlderReleaseTests {
    static var model: [String: Any] {
        [
            "name": "m", "description": "a model", "latest_version": 2, "created_at": "2026-11-01T00:00:00Z",
            "versions": [1, 2].map { version in
                [
                    "name": "m", "version": version, "sha256": String(repeating: "a", count: 64), "size": 10,
                    "format": "tflite", "task": "classification", "model_id": "m", "description": "a model",
                    "created_at": "2026-11-01T00:00:00Z", "created_by": "admin",
                ] as [String: Any]
            },
            "aliases": [Self.alias],
        ]
    }
    static var alias: [String: Any] {
        [
            "name": "m", "alias": "production", "targets": [["version": 2, "weight": 100]],
            "updated_at": "2026-11-02T00:00:00Z", "updated_by": "admin",
        ]
    }

    @Test("hub show reads a 404 on the gates route as no gates; hub alias --force says no move was forced")
    func olderHub() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-older-hub")
        defer { folder.remove() }
        let hub = try FakeHub(folder: folder.path("fake"))
        defer { hub.stop() }
        let history: [String: Any] = [
            "history": [
                [
                    "name": "m", "alias": "production", "sequence": 1, "action": "set",
                    "targets": [["version": 2, "weight": 100]], "previous": [], "changed_at": "2026-11-02T00:00:00Z",
                    "changed_by": "admin",
                ] as [String: Any]
            ]
        ]
        try hub.script([
            "/v1/models/m": ["json": Self.model],
            "/v1/models/m/aliases/production": ["json": Self.alias],
            "/v1/models/m/aliases/production/history": ["json": history],
        ])
        let cache = folder.path("cache")
        let show = try HubHostileTests.netrunner(["hub", "show", "m", "--hub", hub.address], cache: cache)
        #expect(show.status == 0, "\(show)")
        #expect(show.stdout.contains("production -> 2") && !show.stdout.contains("gate on"), "\(show)")
        let forced = try HubHostileTests.netrunner(
            ["hub", "alias", "m", "production", "2", "--force", "why", "--hub", hub.address], cache: cache,
            token: "k")
        #expect(forced.status == 0, "\(forced)")
        #expect(forced.stdout.contains("m: production -> 2 (not forced:"), "\(forced)")
        #expect(!forced.stdout.contains("forced past its gate"), "\(forced)")
    }
}
