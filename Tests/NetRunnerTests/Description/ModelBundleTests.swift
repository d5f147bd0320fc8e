import Foundation
import NetRunnerTestSupport
import Testing

@testable import NetRunner

/// TensorIO / Net Runner bundles: the seed's model.json shape runs unchanged, and every kind
/// of bad description or bundle is an error naming the file and the field.
@Suite("Model bundles and model.json")
struct ModelBundleTests {
    static let floatBundle = "Tests/Fixtures/Bundles/mobilenet_v2_1.0_224_float32.tiobundle"
    static let quantizedBundle = "Tests/Fixtures/Bundles/mobilenet_v2_1.0_224_uint8.tfbundle"

    /// The seed's own MobileNet model.json fields, with its trailing commas.
    static let seedJSON = """
        {
          "name": "MobileNet V2 1.0 224",
          "details": "MobileNet V2 with a width multiplier of 1.0 and an input resolution of 224x224.",
          "id": "mobilenet-v2-100-224-unquantized",
          "version": "1",
          "author": "Andrew G. Howard, Menglong Zhu, Bo Chen",
          "license": "Apache License. Version 2.0 http://www.apache.org/licenses/LICENSE-2.0",
          "model": {
            "file": "model.tflite",
            "quantized": false,
            "type": "image.classification.imagenet"
          },
          "inputs": [
            {
              "name": "image",
              "type": "image",
              "shape": [224,224,3],
              "format": "RGB",
              "normalize": {
                "standard": "[-1,1]"
              }
            },
          ],
          "outputs": [
            {
              "name": "classification",
              "type": "array",
              "shape": [1,1000],
              "labels": "labels.txt"
            },
          ]
        }
        """

    func problems(_ json: String) -> [ModelBundleError.Problem] {
        do {
            _ = try ModelDescription.parse(Data(json.utf8), source: "model.json")
            return []
        } catch {
            guard case .invalidDescription(_, let problems) = error else { return [] }
            return problems
        }
    }

    @Test("The seed's model.json parses: every field, standard normalisation, trailing commas")
    func seed() throws {
        let description = try ModelDescription.parse(Data(Self.seedJSON.utf8))
        #expect(description.id == "mobilenet-v2-100-224-unquantized")
        #expect(
            description.model
                == .init(
                    file: "model.tflite", quantized: false, type: "image.classification.imagenet", backend: nil,
                    modes: [], className: nil))
        #expect(description.inputs.first?.kind == .image)
        #expect(description.inputs.first?.shape == [224, 224, 3])
        #expect(description.inputs.first?.normalize == .init(scale: 2 / 255, bias: [-1, -1, -1], standard: "[-1,1]"))
        #expect(description.outputs.first?.labels == "labels.txt")
        #expect(description.placeholder == false)
    }

    @Test("A float bundle (.tiobundle) and a quantized one (.tfbundle) classify real photos")
    func classify() throws {
        let float = try ImageClassifier(bundle: try ModelBundle(path: Fixtures.path(Self.floatBundle)))
        #expect(float.preprocessing.normalization == .zeroToOne)
        #expect(
            try float.classify(fileAt: Fixtures.path("Tests/Fixtures/Photos/test/chelsea.png")).categories.first?
                .displayName == "Egyptian cat")
        let quantized = try ImageClassifier(bundle: try ModelBundle(path: Fixtures.path(Self.quantizedBundle)))
        #expect(quantized.preprocessing.normalization == nil)
        let bundle = try ModelBundle(path: Fixtures.path(Self.quantizedBundle))
        #expect(
            bundle.description.options == .init(devicePosition: "back", outputFormat: "image.classification.nodecay"))
        #expect(
            try quantized.classify(fileAt: Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")).categories.first?
                .displayName == "espresso")
    }

    @Test("Every problem is reported with its JSON path, what was expected and what was found")
    func validation() {
        let found = problems(
            """
            {"name": "x", "details": 3, "id": "x", "version": "1", "author": "a",
             "model": {"quantized": "no"},
             "inputs": [{"name": "image", "type": "picture", "shape": [0, 224]},
                        {"name": "other", "type": "image", "shape": [224, 224, 3], "format": "RGBA",
                         "crop": "fit", "normalize": {"standard": "[0,255]"}}],
             "outputs": [{"name": "out", "type": "array", "shape": [1, 10], "dequantize": {"scale": 0, "bias": "x"}}],
             "options": {"device_position": "side"}}
            """)
        let paths = Set(found.map(\.path))
        #expect(
            paths == [
                "details", "license", "model.file", "model.quantized", "inputs[0].type", "inputs[0].shape[0]",
                "inputs[1].format", "inputs[1].crop", "inputs[1].normalize.standard", "outputs[0].dequantize.scale",
                "outputs[0].dequantize.bias", "options.device_position",
            ], "\(found)")
        #expect(found.contains(.init(path: "inputs[1].format", expected: "\"RGB\" or \"BGR\"", found: "\"RGBA\"")))
        #expect(found.contains(.init(path: "license", expected: "a string", found: "missing")))
        #expect(
            found.contains(
                .init(path: "inputs[1].crop", expected: "\"center\", \"stretch\" or \"letterbox\"", found: "\"fit\"")))
        #expect(
            found.contains(
                .init(path: "inputs[1].normalize.standard", expected: "\"[0,1]\" or \"[-1,1]\"", found: "\"[0,255]\"")))
    }

    @Test("Malformed JSON is an error naming the file")
    func malformed() {
        #expect {
            try ModelDescription.parse(Data("{\"name\": ".utf8), source: "bundle/model.json")
        } throws: { error in
            guard case ModelBundleError.malformedJSON(let file, _) = error else { return false }
            return file == "bundle/model.json"
        }
    }

    @Test("Model files missing, outside the bundle, or reached through a symbolic link out are refused")
    func containment() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("netrunner-bundles-\(UUID())")
        defer { try? FileManager.default.removeItem(at: root) }
        func bundle(_ name: String, file: String) throws -> String {
            let folder = root.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let json = Self.seedJSON.replacingOccurrences(of: "\"model.tflite\"", with: "\"\(file)\"")
            try Data(json.utf8).write(to: folder.appendingPathComponent("model.json"))
            return folder.path
        }
        let missing = try bundle("missing.tiobundle", file: "model.tflite")
        #expect(throws: ModelBundleError.missingFile(bundle: missing, file: "model.tflite")) {
            try ModelBundle(path: missing)
        }
        let dotdot = try bundle("dotdot.tiobundle", file: "../model.tflite")
        #expect(throws: ModelBundleError.fileOutsideBundle(bundle: dotdot, file: "../model.tflite")) {
            try ModelBundle(path: dotdot)
        }
        let absolute = try bundle("absolute.tiobundle", file: "/etc/passwd")
        #expect(throws: ModelBundleError.fileOutsideBundle(bundle: absolute, file: "/etc/passwd")) {
            try ModelBundle(path: absolute)
        }
        let linked = try bundle("linked.tiobundle", file: "model.tflite")
        try FileManager.default.createSymbolicLink(
            atPath: linked + "/model.tflite", withDestinationPath: Fixtures.path(Fixtures.MobileNet.uint8))
        // The link is named with where it points (issue 32, finding 5).
        let target = URL(fileURLWithPath: Fixtures.path(Fixtures.MobileNet.uint8)).resolvingSymlinksInPath().path
        #expect(
            throws: ModelBundleError.linkOutsideBundle(bundle: linked, link: "model.tflite", target: target)
        ) {
            try ModelBundle(path: linked)
        }
        #expect(
            "\(ModelBundleError.linkOutsideBundle(bundle: linked, link: "model.tflite", target: target))"
                == "\(linked): model.tflite is a link to \(target), outside the bundle folder; refused. "
                + "Copy the file into the bundle instead.")
        // model.json itself through a link out, and a labels folder that is a link out.
        let described = try bundle("described.tiobundle", file: "model.tflite")
        try FileManager.default.moveItem(atPath: described + "/model.json", toPath: root.path + "/elsewhere.json")
        try FileManager.default.createSymbolicLink(
            atPath: described + "/model.json", withDestinationPath: root.path + "/elsewhere.json")
        let elsewhere = URL(fileURLWithPath: root.path + "/elsewhere.json").resolvingSymlinksInPath().path
        #expect(
            throws: ModelBundleError.linkOutsideBundle(bundle: described, link: "model.json", target: elsewhere)
        ) {
            try ModelBundle(path: described)
        }
        // Links that stay inside keep working.
        let inside = try bundle("inside.tiobundle", file: "model.tflite")
        try FileManager.default.createDirectory(atPath: inside + "/weights", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: inside + "/assets", withIntermediateDirectories: true)
        try Data("cat\n".utf8).write(to: URL(fileURLWithPath: inside + "/assets/labels.txt"))
        try FileManager.default.copyItem(
            atPath: Fixtures.path(Fixtures.MobileNet.uint8), toPath: inside + "/weights/real.tflite")
        try FileManager.default.createSymbolicLink(
            atPath: inside + "/model.tflite", withDestinationPath: "weights/real.tflite")
        #expect(try ModelBundle(path: inside).modelPath.hasSuffix("/inside.tiobundle/weights/real.tflite"))
        #expect(throws: ModelBundleError.notABundle(path: root.path + "/none", reason: "no such folder")) {
            try ModelBundle(path: root.path + "/none")
        }
    }

    @Test("A description that does not match its model, or labels of the wrong length, are clear errors")
    func mismatch() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("netrunner-mismatch-\(UUID())")
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("wrong.tiobundle")
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("assets"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Fixtures.path(Fixtures.MobileNet.uint8), toPath: folder.appendingPathComponent("model.tflite").path)
        try Data("cat\ndog\n".utf8).write(to: folder.appendingPathComponent("assets/labels.txt"))
        let json = Self.seedJSON.replacingOccurrences(of: "[224,224,3]", with: "[192,192,3]")
        try Data(json.utf8).write(to: folder.appendingPathComponent("model.json"))
        #expect {
            try ImageClassifier(bundle: try ModelBundle(path: folder.path))
        } throws: { error in
            guard case ModelBundleError.descriptionMismatch(_, let problems) = error else { return false }
            return problems.map(\.path) == ["inputs[0].shape"]
        }
        try Data(Self.seedJSON.utf8).write(to: folder.appendingPathComponent("model.json"))
        #expect {
            try ImageClassifier(bundle: try ModelBundle(path: folder.path))
        } throws: { error in
            guard case NetRunnerError.labelCountMismatch(_, 2, 1000) = error else { return false }
            return true
        }
    }
}
