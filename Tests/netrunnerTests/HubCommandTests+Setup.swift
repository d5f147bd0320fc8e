import Foundation
import NetRunnerTestSupport
import Testing

/// The hubs `netrunner hub`'s tests start: in process (`Setup`) or as a process (`ProcessSetup`),
/// each in a fresh folder with a client cache of its own.
extension HubCommandTests {
    /// A hub in process in a fresh folder (``LiveServer/hub(data:arguments:sourceLocation:_:)``),
    /// a client cache of its own, and what the CLI needs to reach both.
    struct Setup: Sendable {
        let folder: TemporaryFolder
        let hub: LiveServer
        var environment: [String: String?] {
            ["NETRUNNER_HUB": hub.address, "NETRUNNER_CACHE_DIR": folder.path("cache"), "NETRUNNER_HUB_TOKEN": nil]
        }

        /// Runs `body` with a hub started with `arguments`, then stops the hub (expecting a
        /// clean stop) and removes the folder.
        static func with<Value>(
            _ arguments: [String] = [], sourceLocation: SourceLocation = #_sourceLocation,
            _ body: (Setup) async throws -> Value
        ) async throws -> Value {
            let folder = try TemporaryFolder(prefix: "netrunner-hub")
            defer { folder.remove() }
            return try await LiveServer.hub(
                data: folder.path("data"), arguments: arguments, sourceLocation: sourceLocation
            ) { hub in
                try await body(Setup(folder: folder, hub: hub))
            }
        }

        /// `netrunner ARGUMENTS` against the hub, on a thread of its own (the in-process hub
        /// answers it on the cooperative pool).
        func netrunner(_ arguments: [String], token: String? = HubProcess.adminKey) async throws -> ProcessResult {
            var environment = self.environment
            environment["NETRUNNER_HUB_TOKEN"] = token
            let given = environment
            return try await OffPool.run { try ProcessResult.run(Fixtures.netrunner, arguments, environment: given) }
        }

        /// The float32 MobileNetV2 bundle, zipped (13 MB: long enough to interrupt).
        func floatBundleZip() throws -> String {
            let path = folder.path("float.tiobundle.zip")
            if !FileManager.default.fileExists(atPath: path) { try ZipFixture.writeFloatBundle(to: path) }
            return path
        }
    }

    /// A hub process in a fresh folder, a client cache of its own, and what the CLI needs to
    /// reach both: for the tests that need the hub as a process (the browser's pages).
    final class ProcessSetup {
        let folder: TemporaryFolder
        let hub: HubProcess
        var environment: [String: String?] {
            ["NETRUNNER_HUB": hub.address, "NETRUNNER_CACHE_DIR": folder.path("cache"), "NETRUNNER_HUB_TOKEN": nil]
        }

        init(_ arguments: [String] = []) throws {
            folder = try TemporaryFolder(prefix: "netrunner-hub")
            hub = try HubProcess(data: folder.path("data"), arguments: arguments)
        }

        func netrunner(_ arguments: [String], token: String? = HubProcess.adminKey) throws -> ProcessResult {
            var environment = self.environment
            environment["NETRUNNER_HUB_TOKEN"] = token
            return try ProcessResult.run(Fixtures.netrunner, arguments, environment: environment)
        }

        deinit {
            hub.stop()
            folder.remove()
        }
    }
}
