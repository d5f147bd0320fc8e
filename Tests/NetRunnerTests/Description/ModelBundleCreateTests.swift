import Foundation
import NetRunnerTestSupport
import Testing

@testable import NetRunner

/// `ModelBundle.create`: bundles written from models, filled from their metadata.
@Suite("Creating bundles")
struct ModelBundleCreateTests {
    func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("netrunner-create-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test("From a model with metadata: its name, licence and packed labels; the bundle classifies")
    func fromMetadata() throws {
        let root = try folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let path = root.appendingPathComponent("meta.tiobundle").path
        let bundle = try ModelBundle.create(
            at: path, modelPath: Fixtures.path("Models/mobilenet_v2_1.0_224_uint8_metadata.tflite"))
        #expect(bundle.description.name == "MobileNetV2 1.0 224 ImageNet (uint8 quantized)")
        #expect(bundle.description.model.quantized)
        #expect(bundle.description.model.type == "image.classification")
        #expect(bundle.description.inputs.first?.kind == .image)
        #expect(bundle.description.outputs.first?.labels == "labels.txt")
        let classifier = try ImageClassifier(bundle: bundle)
        #expect(
            try classifier.classify(fileAt: Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")).categories.first?
                .displayName == "espresso")
        // Only the bundle is left behind: no staging folder.
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path) == ["meta.tiobundle"])
    }

    @Test("From a bare model with flags; an existing folder is never replaced; bad labels are refused")
    func fromFlags() throws {
        let root = try folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let path = root.appendingPathComponent("float.tiobundle").path
        let bundle = try ModelBundle.create(
            at: path, modelPath: Fixtures.path(Fixtures.MobileNet.float32),
            labelsPath: Fixtures.path(Fixtures.MobileNet.labels),
            normalization: .zeroToOne, type: "image.classification.imagenet")
        #expect(bundle.description.inputs.first?.normalize == .zeroToOne)
        let classifier = try ImageClassifier(bundle: bundle)
        #expect(
            try classifier.classify(fileAt: Fixtures.path("Tests/Fixtures/Photos/test/chelsea.png")).categories.first?
                .displayName == "Egyptian cat")
        #expect(throws: ModelBundleError.alreadyExists(path: path)) {
            try ModelBundle.create(at: path, modelPath: Fixtures.path(Fixtures.MobileNet.float32))
        }
        let wrong = root.appendingPathComponent("wrong.tiobundle").path
        #expect(throws: NetRunnerError.self) {
            try ModelBundle.create(
                at: wrong, modelPath: Fixtures.path(Fixtures.MobileNet.float32),
                labelsPath: Fixtures.path("Models/face_labels.txt"))
        }
        #expect(!FileManager.default.fileExists(atPath: wrong))
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path) == ["float.tiobundle"])
    }

    @Test("A dtype that contradicts the model is reported with its path")
    func dtypeMismatch() throws {
        let root = try folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("x.tiobundle")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Fixtures.path(Fixtures.Synthetic.multiIO), toPath: folder.appendingPathComponent("m.tflite").path)
        let json = """
            {"name": "x", "details": "", "id": "x", "version": "1", "author": "", "license": "",
             "model": {"file": "m.tflite", "quantized": false},
             "inputs": [{"name": "zeta", "type": "array", "shape": [1, 3], "dtype": "int32"},
                        {"name": "mid", "type": "array", "shape": [2], "dtype": "uint8"},
                        {"name": "alpha", "type": "array", "shape": [1, 3], "dtype": "int32"}],
             "outputs": [{"name": "a", "type": "array", "shape": [1, 3]}, {"name": "b", "type": "array", "shape": [1, 3]},
                         {"name": "c", "type": "array", "shape": [1]}]}
            """
        try Data(json.utf8).write(to: folder.appendingPathComponent("model.json"))
        #expect {
            try Model(bundle: try ModelBundle(path: folder.path))
        } throws: { error in
            guard case ModelBundleError.descriptionMismatch(_, let problems) = error else { return false }
            return problems == [
                .init(path: "inputs[0].dtype", expected: "\"float32\" (the model's)", found: "\"int32\"")
            ]
        }
    }
}
