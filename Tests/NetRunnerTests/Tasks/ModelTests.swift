import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import TensorFlowLite
import Testing

@testable import NetRunner

/// `Model.run`: inputs by layer name, outputs packed as TensorIO packs them.
@Suite("Running described models")
struct ModelTests {
    static let floatBundle = "Tests/Fixtures/Bundles/mobilenet_v2_1.0_224_float32.tiobundle"

    @Test("An image model's labelled output equals the Python reference exactly")
    func classification() throws {
        let model = try Model(bundle: try ModelBundle(path: Fixtures.path(Self.floatBundle)))
        let image = try ImageDecoder.decode(contentsOf: Fixtures.path("Tests/Fixtures/Photos/test/chelsea.png"))
        let outputs = try model.run(image: image.pixels)
        guard case .labelled(let scores) = outputs["classification"] else {
            Issue.record("expected labelled output, got \(String(describing: outputs["classification"]))")
            return
        }
        // TensorIO packs labelled outputs by label: ImageNet's two "crane" lines share one key.
        #expect(scores.count == 999)
        // Pillow-exact preprocessing and the same runtime: the reference's score (Python on this
        // machine's CPU), bit for bit.
        let reference = try Fixtures.reference()
        let recorded = try #require(
            reference.models.first { $0.file.hasSuffix("mobilenet_v2_1.0_224_float32.tflite") }?.cases
                .first { $0.name == "chelsea" })
        let expected = Numerics.floats(try Fixtures.data(try #require(recorded.outputs.ordered.first)))
        #expect(scores["Egyptian cat"] == Double(expected[285]))
        #expect(abs((scores["Egyptian cat"] ?? 0) - 0.79535937) < 1e-6)
    }

    @Test("Array, uint8, int32 and int64 layers in and out, in the model's order, against the reference")
    func arrays() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "netrunner-model-\(UUID()).tiobundle")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.copyItem(
            atPath: Fixtures.path(Fixtures.Synthetic.multiIO),
            toPath: folder.appendingPathComponent("multi_io.tflite").path)
        let json = """
            {"name": "multi io", "details": "", "id": "multi-io", "version": "1", "author": "NetRunner", "license": "MIT",
             "model": {"file": "multi_io.tflite", "quantized": false},
             "inputs": [{"name": "zeta", "type": "array", "shape": [1, 3]}, {"name": "mid", "type": "array", "shape": [2]},
                        {"name": "alpha", "type": "array", "shape": [1, 3]}],
             "outputs": [{"name": "out_a", "type": "array", "shape": [1, 3]}, {"name": "out_b", "type": "array", "shape": [1, 3]},
                         {"name": "count", "type": "array", "shape": [1]}]}
            """
        try Data(json.utf8).write(to: folder.appendingPathComponent("model.json"))
        let model = try Model(bundle: try ModelBundle(path: folder.path))
        let reference = "Tests/Fixtures/Reference/multi_io__mixed__"
        let zeta = Numerics.floats(try Fixtures.data(reference + "in0.bin")).map { Double($0) }
        let mid = try Fixtures.data(reference + "in1.bin").map { Double($0) }
        let alpha = try Fixtures.data(reference + "in2.bin").withUnsafeBytes {
            $0.bindMemory(to: Int32.self).map { Double($0) }
        }
        let outputs = try model.run(["zeta": .array(zeta), "mid": .array(mid), "alpha": .array(alpha)])
        let outA = try Fixtures.referenceOutput("multi_io__mixed__t1__out0.bin").withUnsafeBytes {
            $0.bindMemory(to: Int32.self).map { Double($0) }
        }
        let outB = Numerics.floats(try Fixtures.referenceOutput("multi_io__mixed__t1__out1.bin")).map { Double($0) }
        let count = try Fixtures.referenceOutput("multi_io__mixed__t1__out2.bin").withUnsafeBytes {
            $0.bindMemory(to: Int64.self).map { Double($0) }
        }
        #expect(outputs["out_a"] == .array(outA))
        #expect(outputs["out_b"] == .array(outB))
        #expect(outputs["count"] == .scalar(count[0]))

        #expect(throws: NetRunnerError.invalidOption(name: "inputs", reason: "no value for the input layer \"zeta\"")) {
            try model.run(["mid": .array(mid), "alpha": .array(alpha)])
        }
        #expect(
            throws: NetRunnerError.invalidOption(
                name: "inputs", reason: "the input layer \"zeta\" takes 3 values, found 1")
        ) {
            try model.run(["zeta": .array([1]), "mid": .array(mid), "alpha": .array(alpha)])
        }
        #expect(throws: NetRunnerError.self) {
            try model.run(image: try PixelBuffer(width: 2, height: 2, format: .rgb24))
        }
    }
}
