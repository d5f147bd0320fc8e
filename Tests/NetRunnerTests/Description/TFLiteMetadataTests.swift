import Foundation
import NetRunnerTestSupport
import TensorFlowLite
import Testing

@testable import NetRunner

/// TFLite metadata read from MediaPipe's BlazeFace, which carries it, and hostile buffers.
@Suite("TFLite metadata")
struct TFLiteMetadataTests {
    static func blazeFaceMetadata() throws -> Data {
        let interpreter = try Interpreter(modelPath: Fixtures.path("Models/face_detection_short_range.tflite"))
        return try #require(interpreter.modelMetadata())
    }

    @Test("BlazeFace's metadata: name, RGB image input normalised to [-1, 1], two outputs")
    func blazeFace() throws {
        let metadata = try TFLiteMetadata(try Self.blazeFaceMetadata(), source: "face_detection_short_range.tflite")
        #expect(metadata.name?.isEmpty == false)
        #expect(metadata.inputs.count == 1)
        #expect(metadata.outputs.count == 2)
        let input = try #require(metadata.inputs.first)
        #expect(input.content == .image(colorSpace: "RGB"))
        let normalization = try #require(input.normalization)
        #expect(normalization.mean == [127.5])
        #expect(normalization.std == [127.5])
        print("BlazeFace metadata: \(metadata.name ?? "-"), outputs \(metadata.outputs.map { $0.name ?? "-" })")
    }

    @Test("Corrupted metadata buffers parse or throw invalidMetadata, never crash", arguments: [0, 1, 2, 3])
    func fuzz(seed: UInt64) throws {
        let original = [UInt8](try Self.blazeFaceMetadata())
        var generator = SeededGenerator(seed: 0x6D65_7461 + seed)
        var rejected = 0
        for _ in 0..<1000 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                let position = Int.random(in: 0..<bytes.count, using: &generator)
                if Bool.random(using: &generator) {
                    bytes[position] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &generator)
                } else {
                    bytes[position] = UInt8.random(in: 0...255, using: &generator)
                }
            }
            if Int.random(in: 0..<8, using: &generator) == 0 {
                bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &generator)))
            }
            do {
                _ = try TFLiteMetadata(Data(bytes), source: "fuzz")
            } catch {
                rejected += 1
            }
        }
        #expect(rejected > 0)
    }

    @Test("A buffer that is not metadata is an error naming the model")
    func notMetadata() {
        #expect(
            throws: ModelBundleError.invalidMetadata(
                file: "m.tflite", reason: "the metadata buffer has no M001 identifier")
        ) {
            try TFLiteMetadata(Data(repeating: 0, count: 64), source: "m.tflite")
        }
        #expect(throws: ModelBundleError.invalidMetadata(file: "m.tflite", reason: "the metadata buffer is too small"))
        {
            try TFLiteMetadata(Data([1, 2]), source: "m.tflite")
        }
    }
}
