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

/// The committed MobileNet with metadata written by tools/metadata (tflite-support's writer),
/// read by our reader and checked against that tool's own dump.
@Suite("A model with TFLite metadata and packed labels")
struct MetadataModelTests {
    static let model = "Models/mobilenet_v2_1.0_224_uint8_metadata.tflite"

    struct Dump: Decodable {
        struct Metadata: Decodable {
            var name: String
            var version: String
            var author: String
            var license: String
        }
        struct Wrapper: Decodable { var metadata: Metadata }
        var tfliteMetadata: Wrapper
        enum CodingKeys: String, CodingKey { case tfliteMetadata = "tflite_metadata" }
    }

    @Test("Our reader sees what the writer's dump says: names, normalisation, labels files")
    func reader() throws {
        let interpreter = try Interpreter(modelPath: Fixtures.path(Self.model))
        let metadata = try TFLiteMetadata(try #require(interpreter.modelMetadata()), source: Self.model)
        let dump = try JSONDecoder().decode(
            Dump.self, from: try Fixtures.data("Tests/Fixtures/Metadata/mobilenet_v2_1.0_224_uint8_metadata.json"))
        #expect(metadata.name == dump.tfliteMetadata.metadata.name)
        #expect(metadata.version == dump.tfliteMetadata.metadata.version)
        #expect(metadata.author == dump.tfliteMetadata.metadata.author)
        #expect(metadata.license == dump.tfliteMetadata.metadata.license)
        let input = try #require(metadata.inputs.first)
        #expect(input.name == "image")
        #expect(input.content == .image(colorSpace: "RGB"))
        #expect(input.normalization == TFLiteMetadata.Normalization(mean: [0], std: [255]))
        #expect(input.minimum == [0] && input.maximum == [255])
        let output = try #require(metadata.outputs.first)
        #expect(output.content == .feature)
        #expect(output.associatedFiles.map(\.name) == ["labels.txt", "labels_en.txt"])
        #expect(output.associatedFiles.map(\.type) == [.tensorAxisLabels, .tensorAxisLabels])
        #expect(output.associatedFiles.map(\.locale) == [nil, "en"])
        #expect(output.labelsFile()?.name == "labels.txt")
        #expect(output.labelsFile(locale: "en")?.name == "labels_en.txt")

        let packed = try PackedFiles(model: try Fixtures.data(Self.model), source: Self.model)
        #expect(packed.files["labels.txt"] == (try Fixtures.data(Fixtures.MobileNet.labels)))
        #expect(Set(packed.files.keys) == ["labels.txt", "labels_en.txt"])
    }

    @Test("Zero configuration: the model's own labels, no labels file given")
    func zeroConfiguration() throws {
        let classifier = try ImageClassifier(modelPath: Fixtures.path(Self.model))
        #expect(classifier.labels?.count == 1000)
        let result = try classifier.classify(fileAt: Fixtures.path("Tests/Fixtures/Photos/test/chelsea.png"))
        #expect(result.categories.first?.label == "Egyptian cat")
        // The metadata does not change the outputs: the same as the model without it.
        let plain = try ImageClassifier(
            modelPath: Fixtures.path(Fixtures.MobileNet.uint8), labelsPath: Fixtures.path(Fixtures.MobileNet.labels))
        let expected = try plain.classify(fileAt: Fixtures.path("Tests/Fixtures/Photos/test/chelsea.png"))
        #expect(result.categories == expected.categories)
    }
}
