import Foundation
import NetRunner
import NetRunnerTestSupport
import Testing

@testable import NetRunnerEngine

/// The one model catalog of `--model ID`, `netrunner models` and `serve` (issue 25: one way
/// to name a model; issue 24: one catalog, not one per command), read in process.
@Suite("Model catalog")
struct ModelCatalogTests {
    /// The repository's uint8 MobileNetV2 bundle as an embedded model (what the executable
    /// links in).
    static func embedded() throws -> [(kind: ImageTask.Kind, source: ModelSource)] {
        let bundle = Fixtures.path("Models/bundles/mobilenet_v2_1.0_224_uint8.tiobundle")
        let description = try ModelDescription.parse(
            try Data(contentsOf: URL(fileURLWithPath: bundle + "/model.json")))
        return [
            (
                .classification,
                .bundleData(
                    name: "embedded",
                    modelData: try Data(
                        contentsOf: URL(fileURLWithPath: bundle + "/mobilenet_v2_1.0_224_uint8.tflite")),
                    description: description,
                    assets: ["labels.txt": try Data(contentsOf: URL(fileURLWithPath: bundle + "/assets/labels.txt"))])
            )
        ]
    }

    @Test("Ids, short names and folder models resolve; one network is served once, the bundle over its copies")
    func catalog() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-catalog")
        defer { folder.remove() }
        // The embedded model's bytes again as a bare file, the float32 model as a bundle and as a
        // bare file, and a folder that is no bundle.
        try FileManager.default.copyItem(
            atPath: Fixtures.path(Fixtures.MobileNet.uint8), toPath: folder.path("mobilenet_v2_1.0_224_uint8.tflite"))
        try FileManager.default.copyItem(
            atPath: Fixtures.path("Models/bundles/mobilenet_v2_1.0_224_float32.tiobundle"),
            toPath: folder.path("float.tiobundle"))
        try FileManager.default.copyItem(
            atPath: Fixtures.path(Fixtures.MobileNet.float32), toPath: folder.path("float_copy.tflite"))
        let catalog = try ModelCatalog(embedded: Self.embedded(), folder: folder.url.path)
        #expect(catalog.entries.first?.id == "mobilenet-v2-1.0-224-uint8")
        #expect(catalog.entry("MobileNet")?.embedded == .classification)
        #expect(catalog.entry("float_copy")?.path == folder.path("float_copy.tflite"))
        #expect(catalog.entry("face") == nil)  // no embedded detector given
        #expect(catalog.unknownMessage("mobilenet-v2", flag: "--model").contains("did you mean"))

        var notes: [String] = []
        let served = try catalog.servedModels { notes.append($0) }
        let ids = served.map(\.id)
        // The bare copy of the embedded model and the bare copy of the float32 bundle's model
        // are left out, each with a note; the bundle and the embedded model stay.
        #expect(ids.contains("mobilenet-v2-1.0-224-uint8") && ids.contains("mobilenet-v2-1.0-224-float32"), "\(ids)")
        #expect(!ids.contains("float_copy") && !ids.contains("mobilenet_v2_1.0_224_uint8"), "\(ids)")
        // Said in one note, however many copies.
        let copies = notes.filter { $0.contains("model files are the same as another model's, served once: ") }
        #expect(copies.count == 1 && copies[0].hasPrefix("2 model files"), "\(notes)")
        #expect(served.first { $0.id == "mobilenet-v2-1.0-224-uint8" }?.model.trust == .trusted)
        #expect(catalog.distinct().map(\.entry.id) == ids)
    }

    @Test("A models folder that is no folder is one clear error")
    func notAFolder() throws {
        #expect(throws: ModelCatalog.FolderError.self) {
            try ModelCatalog(embedded: [], folder: Fixtures.path(Fixtures.MobileNet.uint8))
        }
    }
}
