import Foundation
import NetRunner
import NetRunnerTestSupport
import Synchronization
import Testing

@testable import NetRunnerHub

/// Net Runner's import by URL: real downloads from a loopback server, real bundles and photos,
/// hostile inputs refused with the models folder left as it was.
@Suite("Importing models by URL or path", .serialized)
struct ModelImporterTests {
    /// A site to download from and an empty models folder.
    final class Setup {
        let folder: TemporaryFolder
        let server: FileServer
        var site: String { folder.path("site") }
        var models: String { folder.path("Models") }

        init() throws {
            folder = try TemporaryFolder(prefix: "netrunner-import")
            try FileManager.default.createDirectory(atPath: folder.path("site"), withIntermediateDirectories: true)
            server = try FileServer(folder: folder.path("site"))
        }

        @discardableResult
        func publish(_ data: Data, as name: String) throws -> String {
            try data.write(to: URL(fileURLWithPath: site + "/" + name))
            return server.url(name)
        }

        /// What a person sees in the models folder (hidden staging folders included, to check
        /// none is left behind).
        func installed() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: models)) ?? []).sorted()
        }

        deinit {
            server.stop()
            folder.remove()
        }
    }

    /// The uint8 MobileNetV2 bundle of the fixtures, zipped.
    static func zippedBundle(id: String? = nil, folder: String = "m.tfbundle") throws -> Data {
        let bundle = "Tests/Fixtures/Bundles/mobilenet_v2_1.0_224_uint8.tfbundle/"
        var json = try String(decoding: Fixtures.data(bundle + "model.json"), as: UTF8.self)
        if let id { json = json.replacingOccurrences(of: "\"mobilenet-v2-100-224-uint8\"", with: "\"\(id)\"") }
        return ZipFixture.zip([
            ("\(folder)/model.json", Data(json.utf8)),
            (
                "\(folder)/mobilenet_v2_1.0_224_uint8.tflite",
                try Fixtures.data(bundle + "mobilenet_v2_1.0_224_uint8.tflite")
            ),
            ("\(folder)/assets/labels.txt", try Fixtures.data(bundle + "assets/labels.txt")),
        ])
    }

    /// SHA-256 by coreutils, independent of our digest code.
    static func sha256sum(_ path: String) throws -> String {
        let process = Process()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sha256sum", path]
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return String(text.prefix(64))
    }

    @Test("A zipped bundle by URL (through a redirect) is installed, verified and classifies a real photo")
    func zippedBundleByURL() async throws {
        let setup = try Setup()
        try setup.publish(try Self.zippedBundle(), as: "m.tfbundle.zip")
        let events = Mutex<[ImportProgress]>([])
        let model = try await ModelImporter(modelsFolder: setup.models).importModel(
            from: setup.server.url("redirect/m.tfbundle.zip")
        ) { event in events.withLock { $0.append(event) } }
        #expect(model.id == "mobilenet-v2-100-224-uint8")
        #expect(model.kind == .classification)
        #expect(model.path == setup.models + "/m.tfbundle")
        #expect(!model.replaced)
        #expect(model.sha256 == (try Self.sha256sum(setup.site + "/m.tfbundle.zip")))
        #expect(setup.installed() == ["m.tfbundle"])
        let size = try Data(contentsOf: URL(fileURLWithPath: setup.site + "/m.tfbundle.zip")).count
        #expect(model.byteCount == size)
        let seen = events.withLock { $0 }
        #expect(seen.first == .downloading(received: 0, total: size))
        #expect(seen.contains(.downloading(received: size, total: size)))
        #expect(Array(seen.suffix(3)) == [.unpacking, .validating, .installing])
        // Found as evaluate and serve find models, and it runs.
        #expect(try ModelDirectory(path: setup.models).models[model.id] == model.path)
        let classifier = try ImageClassifier(model: try LoadedModel(.path(model.path)))
        let result = try classifier.classify(fileAt: Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg"))
        #expect(result.categories.first?.displayName == "espresso")
    }

    @Test("A .tflite by URL and a bundle folder by path are installed; a second import of an id needs replace")
    func tfliteAndFolder() async throws {
        let setup = try Setup()
        let url = try setup.publish(
            try Fixtures.data("Models/mobilenet_v2_1.0_224_uint8_metadata.tflite"), as: "mobilenet.tflite")
        let importer = ModelImporter(modelsFolder: setup.models)
        let model = try await importer.importModel(from: url)
        #expect(model.id == "mobilenet")
        #expect(model.path == setup.models + "/mobilenet.tflite")
        #expect(
            model.sha256 == (try Self.sha256sum(Fixtures.path("Models/mobilenet_v2_1.0_224_uint8_metadata.tflite"))))

        let folder = Fixtures.path("Models/bundles/face_detection_short_range.tiobundle")
        let face = try await importer.importModel(from: folder)
        #expect(face.kind == .detection)
        #expect(face.id == "face-detection-short-range")
        #expect(setup.installed() == ["face_detection_short_range.tiobundle", "mobilenet.tflite"])

        // The same id again: refused, nothing changed; with replace: replaced in place.
        let before = try Self.sha256sum(setup.models + "/mobilenet.tflite")
        await #expect(throws: ImportError.alreadyInstalled(id: "mobilenet", path: setup.models + "/mobilenet.tflite")) {
            try await importer.importModel(from: url)
        }
        #expect(setup.installed() == ["face_detection_short_range.tiobundle", "mobilenet.tflite"])
        let again = try await importer.importModel(from: url, sha256: model.sha256.uppercased(), replace: true)
        #expect(again.replaced)
        #expect(try Self.sha256sum(setup.models + "/mobilenet.tflite") == before)
        #expect(setup.installed() == ["face_detection_short_range.tiobundle", "mobilenet.tflite"])
    }

    /// Each hostile source, and what the import must say.
    static let hostile: [String] = [
        "html", "escape", "absolute", "symlink", "two-bundles", "declared-bomb", "non-image", "truncated-model",
        "sha-mismatch", "404", "huge-content-length", "cut-short", "refused", "ftp", "missing", "too-large",
        "folder-not-bundle", "bad-description",
    ]

    @Test("Hostile sources are refused with a message naming them; the models folder stays empty", arguments: hostile)
    func refused(kind: String) async throws {
        let setup = try Setup()
        let json = Data(#"{"name": "x"}"#.utf8)
        let model = try Fixtures.data("Models/mobilenet_v2_1.0_224_uint8_metadata.tflite")
        var importer = ModelImporter(modelsFolder: setup.models)
        var sha256: String?
        let source: String
        let expected: String
        switch kind {
        case "html":
            source = try setup.publish(Data("<!DOCTYPE html><html>Sign in</html>".utf8), as: "model.zip")
            expected = "it is an HTML page"
        case "escape":
            source = try setup.publish(
                ZipFixture.zip([("x.tiobundle/model.json", json), ("../evil.txt", json)]), as: "x.zip")
            expected = "evil.txt"
        case "absolute":
            source = try setup.publish(
                ZipFixture.zip([("x.tiobundle/model.json", json), ("/tmp/evil.txt", json)]), as: "x.zip")
            expected = "/tmp/evil.txt"
        case "symlink":
            source = try setup.publish(
                ZipFixture.zip([("x.tiobundle/model.json", json)], attributes: 0o120777 << 16), as: "x.zip")
            expected = "link"
        case "two-bundles":
            source = try setup.publish(
                ZipFixture.zip([("a.tiobundle/model.json", json), ("b.tiobundle/model.json", json)]), as: "x.zip")
            expected = "it holds 2 model.json files"
        case "declared-bomb":
            var zip = [UInt8](ZipFixture.zip([("x.tiobundle/model.json", Data("{}".utf8))]))
            let central = try #require(
                zip.indices.first { zip[$0] == 0x50 && zip[$0 + 1] == 0x4B && zip[$0 + 2] == 1 && zip[$0 + 3] == 2 })
            for offset in [20, 24] {
                zip.replaceSubrange((central + offset)..<(central + offset + 4), with: [0, 0, 0, 0x80])
            }
            source = try setup.publish(Data(zip), as: "bomb.zip")
            expected = "beyond the size limit"
        case "non-image":
            source = try setup.publish(try Fixtures.data("Tests/Fixtures/Models/multi_io.tflite"), as: "multi.tflite")
            expected = "Cannot import"
        case "truncated-model":
            source = try setup.publish(model.prefix(model.count / 3), as: "cut.tflite")
            expected = "Cannot import"
        case "sha-mismatch":
            source = try setup.publish(model, as: "m.tflite")
            sha256 = String(repeating: "0", count: 64)
            expected = "not the expected 0000"
        case "404":
            source = setup.server.url("nothing.zip")
            expected = "the server answered 404"
        case "huge-content-length":
            source = setup.server.url("huge")
            expected = "larger than the limit"
        case "cut-short":
            try setup.publish(model, as: "m.tflite")
            source = setup.server.url("short/m.tflite")
            expected = "Cannot download"
        case "refused":
            source = "http://127.0.0.1:9/model.zip"
            expected = "refused"
        case "ftp":
            source = "ftp://example.org/model.zip"
            expected = "only http:// and https:// URLs"
        case "missing":
            source = setup.folder.path("no-such.zip")
            expected = "no such file or folder"
        case "too-large":
            source = try setup.publish(model, as: "m.tflite")
            importer.maximumBytes = 1000
            expected = "larger than the limit of 1000 bytes"
        case "folder-not-bundle":
            source = setup.site
            expected = "a folder without a model.json"
        default:  // bad-description
            source = try setup.publish(
                ZipFixture.zip([
                    ("x.tiobundle/model.json", Data(#"{"name": "x", "id": "x", "model": {"file": "m.tflite"}}"#.utf8)),
                    ("x.tiobundle/m.tflite", model),
                ]), as: "x.zip")
            expected = "Cannot import"
        }
        await #expect {
            try await importer.importModel(from: source, sha256: sha256)
        } throws: { error in
            let text = "\(error)"
            let named = text.contains(source) || kind == "escape" || kind == "absolute" || kind == "symlink"
            if !(error is ImportError) || !text.contains(expected) || !named {
                Issue.record("\(kind): \(text)")
                return false
            }
            return true
        }
        #expect(setup.installed().allSatisfy { $0.hasPrefix(".") == false } && setup.installed().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: setup.folder.path("evil.txt")))
        #expect(!FileManager.default.fileExists(atPath: setup.models + "/../evil.txt"))
    }
}
