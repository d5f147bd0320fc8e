import Foundation
import NetRunnerTestSupport
import Testing

@testable import NetRunner

/// Zipped bundles, as Net Runner imports them: unpacked into a private folder, hostile
/// archives refused before anything is written.
@Suite("Zipped model bundles")
struct ZippedModelBundleTests {
    func write(_ data: Data, _ name: String) throws -> (path: String, folder: URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("netrunner-zip-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent(name)
        try data.write(to: url)
        return (url.path, folder)
    }

    @Test("A deflate-compressed bundle runs, and its temporary folder goes away with it")
    func deflated() throws {
        let path = Fixtures.path("Tests/Fixtures/Bundles/multi_io.tiobundle.zip")
        #expect(ZippedModelBundle.isZip(path))
        var unpacked = ""
        do {
            let zipped = try ZippedModelBundle(zipAt: path)
            unpacked = zipped.bundle.path
            #expect(zipped.bundle.description.id == "multi-io")
            let model = try Model(bundle: zipped.bundle)
            let outputs = try model.run([
                "zeta": .array([1, 2, 3]), "mid": .array([4, 5]), "alpha": .array([6, 7, 8]),
            ])
            #expect(outputs.count == 3)
        }
        #expect(!unpacked.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: unpacked))
    }

    @Test("A stored bundle with labels classifies a real photo")
    func stored() throws {
        let bundle = "Tests/Fixtures/Bundles/mobilenet_v2_1.0_224_uint8.tfbundle/"
        let zip = ZipFixture.zip([
            ("m.tfbundle/model.json", try Fixtures.data(bundle + "model.json")),
            (
                "m.tfbundle/mobilenet_v2_1.0_224_uint8.tflite",
                try Fixtures.data(bundle + "mobilenet_v2_1.0_224_uint8.tflite")
            ),
            ("m.tfbundle/assets/labels.txt", try Fixtures.data(bundle + "assets/labels.txt")),
        ])
        let (path, folder) = try write(zip, "m.tfbundle.zip")
        defer { try? FileManager.default.removeItem(at: folder) }
        let zipped = try ZippedModelBundle(zipAt: path)
        let classifier = try ImageClassifier(bundle: zipped.bundle)
        let result = try classifier.classify(fileAt: Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg"))
        #expect(result.categories.first?.displayName == "espresso")
    }

    @Test(
        "Entries leaving the archive, symbolic links, several bundles and non-zips are refused",
        arguments: ["escape", "absolute", "symlink", "two", "none", "text"])
    func hostile(kind: String) throws {
        let json = Data(#"{"name": "x"}"#.utf8)
        let data: Data
        switch kind {
        case "escape": data = ZipFixture.zip([("x.tiobundle/model.json", json), ("../evil.txt", json)])
        case "absolute": data = ZipFixture.zip([("x.tiobundle/model.json", json), ("/tmp/evil.txt", json)])
        case "symlink":
            data = ZipFixture.zip([("x.tiobundle/model.json", json)], attributes: 0o120777 << 16)
        case "two": data = ZipFixture.zip([("a.tiobundle/model.json", json), ("b.tiobundle/model.json", json)])
        case "none": data = ZipFixture.zip([("readme.txt", json)])
        default: data = Data("not a zip".utf8)
        }
        let (path, folder) = try write(data, "bad.zip")
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect {
            try ZippedModelBundle(zipAt: path)
        } throws: { error in
            guard case ModelBundleError.notABundle(let reported, _) = error else { return false }
            return reported == path
        }
        #expect(
            !FileManager.default.fileExists(
                atPath: folder.deletingLastPathComponent().appendingPathComponent("evil.txt").path))
    }

    @Test("An archive declaring more than the size limit is refused before it is expanded")
    func bomb() throws {
        // One stored entry whose declared sizes claim 2 GiB.
        var zip = [UInt8](ZipFixture.zip([("x.tiobundle/model.json", Data("{}".utf8))]))
        let central = try #require(
            zip.indices.first { zip[$0] == 0x50 && zip[$0 + 1] == 0x4B && zip[$0 + 2] == 1 && zip[$0 + 3] == 2 })
        for offset in [20, 24] {
            zip.replaceSubrange((central + offset)..<(central + offset + 4), with: [0, 0, 0, 0x80])
        }
        let (path, folder) = try write(Data(zip), "bomb.zip")
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect {
            try ZippedModelBundle(zipAt: path)
        } throws: { error in
            "\(error)".contains("beyond the size limit")
        }
    }
}
