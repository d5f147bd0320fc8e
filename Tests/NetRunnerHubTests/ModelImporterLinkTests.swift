import Foundation
import NetRunnerTestSupport
import Testing

@testable import NetRunnerHub

/// `import FOLDER` installs what the folder holds: a link out of it fails the import, naming
/// the link and where it points, and an installed bundle never carries a link (issue 32,
/// finding 5).
@Suite("Importing a bundle folder: links that leave it", .serialized)
struct ModelImporterLinkTests {
    static let fixture = "Tests/Fixtures/Bundles/mobilenet_v2_1.0_224_uint8.tfbundle"
    static let model = "mobilenet_v2_1.0_224_uint8.tflite"

    /// A copy of the uint8 bundle (`m.tfbundle`), a secret beside it, an empty models folder.
    static func layout() throws -> TemporaryFolder {
        let folder = try TemporaryFolder(prefix: "netrunner-import-links")
        try FileManager.default.copyItem(atPath: Fixtures.path(fixture), toPath: folder.path("m.tfbundle"))
        try folder.write(Data("-----BEGIN OPENSSH PRIVATE KEY-----\nSECRET\n".utf8), named: "id_ed25519")
        return folder
    }

    @Test("A link out of the folder fails the import before anything is installed, naming it and its target")
    func linkOut() async throws {
        let folder = try Self.layout()
        defer { folder.remove() }
        let bundle = folder.path("m.tfbundle")
        try FileManager.default.createSymbolicLink(
            atPath: bundle + "/assets/notes.txt", withDestinationPath: folder.path("id_ed25519"))
        let secret = URL(fileURLWithPath: folder.path("id_ed25519")).resolvingSymlinksInPath().path
        let models = folder.path("Models")
        await #expect(
            throws: ImportError.badSource(
                source: bundle,
                reason: "assets/notes.txt is a link to \(secret), outside the bundle folder; refused")
        ) { try await ModelImporter(modelsFolder: models).importModel(from: bundle) }
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: models)) ?? []).isEmpty)
    }

    @Test("Links that stay inside keep working: the files behind them are installed as files")
    func linkInside() async throws {
        let folder = try Self.layout()
        defer { folder.remove() }
        let bundle = folder.path("m.tfbundle")
        let manager = FileManager.default
        try manager.createDirectory(atPath: bundle + "/weights", withIntermediateDirectories: true)
        try manager.moveItem(atPath: bundle + "/" + Self.model, toPath: bundle + "/weights/real.tflite")
        try manager.createSymbolicLink(atPath: bundle + "/" + Self.model, withDestinationPath: "weights/real.tflite")
        try manager.createSymbolicLink(atPath: bundle + "/assets/names.txt", withDestinationPath: "labels.txt")
        let models = folder.path("Models")
        let imported = try await ModelImporter(modelsFolder: models).importModel(from: bundle)
        #expect(imported.path == models + "/m.tfbundle")
        for name in [Self.model, "assets/names.txt", "assets/labels.txt", "model.json"] {
            let attributes = try manager.attributesOfItem(atPath: imported.path + "/" + name)
            #expect(attributes[.type] as? FileAttributeType == .typeRegular, "\(name)")
        }
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: imported.path + "/" + Self.model))
                == Data(contentsOf: URL(fileURLWithPath: Fixtures.path(Self.fixture + "/" + Self.model))))
    }
}
