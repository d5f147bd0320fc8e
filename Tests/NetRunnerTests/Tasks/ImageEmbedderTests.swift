import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

@testable import NetRunner

/// Coral's MobileNet V1 embedding extractor on Coral's imprinting photos (cat, dog, hot dog;
/// train and test), against Python's raw outputs (`tools/embedding/record.sh`: ai_edge_litert,
/// the whole image resized with Pillow BILINEAR, raw RGB bytes).
@Suite("Image embedding")
struct ImageEmbedderTests {
    static let model = "Models/mobilenet_v1_1.0_224_quant_embedding_extractor.tflite"
    static let bundle = "Models/bundles/mobilenet_v1_1.0_224_quant_embedding_extractor.tiobundle"
    static let photos = "Tests/Fixtures/Embedding/imprinting"

    /// One photo's output in Python: the raw bytes and their quantization.
    struct PythonEmbedding: Decodable {
        var raw: [Int]
        var scale: Double
        var zeroPoint: Int

        enum CodingKeys: String, CodingKey {
            case raw, scale
            case zeroPoint = "zero_point"
        }
    }

    /// How far values are from Python's raw output, in its quantization steps: the largest
    /// difference and how many are equal.
    static func steps(_ values: [Float], from expected: PythonEmbedding) -> (largest: Double, equal: Int) {
        var largest = 0.0
        var equal = 0
        for (value, raw) in zip(values, expected.raw) {
            let step = (Double(value) / expected.scale + Double(expected.zeroPoint)).rounded()
            largest = max(largest, abs(step - Double(raw)))
            if step == Double(raw) { equal += 1 }
        }
        return (largest, equal)
    }

    static func python() throws -> [String: PythonEmbedding] {
        try JSONDecoder().decode(
            [String: PythonEmbedding].self, from: try Fixtures.data("Tests/Fixtures/Embedding/imprinting.python.json"))
    }

    /// Every photo, by file name.
    static func photoPaths() throws -> [String: String] {
        let root = Fixtures.path(photos)
        var paths: [String: String] = [:]
        let walker = try #require(FileManager.default.enumerator(atPath: root))
        for case let relative as String in walker where relative.hasSuffix(".png") {
            paths[(relative as NSString).lastPathComponent] = root + "/" + relative
        }
        return paths
    }

    /// The class a photo is of: the part of its name before `_`.
    static func className(_ name: String) -> String {
        String(name.prefix { $0 != "_" })
    }

    @Test("Each photo's 1024 values equal Python's within one quantization step; most are equal")
    func equalsPython() throws {
        let embedder = try ImageEmbedder(modelPath: Fixtures.path(Self.model))
        #expect(embedder.dimension == 1024)
        #expect(embedder.preprocessing.cropping == .stretch)
        let python = try Self.python()
        let paths = try Self.photoPaths()
        try #require(python.count == 7 && paths.count == 7)
        for (name, expected) in python.sorted(by: { $0.key < $1.key }) {
            let result = try embedder.run(.file(try #require(paths[name])))
            try #require(result.embedding.count == expected.raw.count)
            #expect(result.headName == "MobilenetV1/Logits/AvgPool_1a/AvgPool")
            let (largest, equal) = Self.steps(result.embedding, from: expected)
            print("embedding \(name): \(equal) of 1024 values equal Python's, the largest difference \(largest) step")
            #expect(largest <= 1, "\(name)")
            #expect(equal >= 1000, "\(name): \(equal) of 1024")
        }
    }

    @Test("Each test photo's nearest training photo is of its own class (cosine similarity)")
    func nearestIsOwnClass() throws {
        let embedder = try ImageEmbedder(modelPath: Fixtures.path(Self.model))
        let paths = try Self.photoPaths()
        let train = try paths.filter { $0.key.contains("_train_") }.mapValues { try embedder.run(.file($0)) }
        let test = try paths.filter { $0.key.contains("_test_") }.mapValues { try embedder.run(.file($0)) }
        try #require(train.count == 4 && test.count == 3)
        for (name, result) in test {
            let ranked = try train.map {
                (name: $0.key, similarity: try ImageEmbedder.cosineSimilarity(result, $0.value))
            }
            .sorted { $0.similarity > $1.similarity }
            let nearest = try #require(ranked.first)
            #expect(Self.className(nearest.name) == Self.className(name), "\(name): \(ranked)")
        }
    }

    @Test("l2Normalize makes unit vectors; quantize gives MediaPipe's bytes, at a cosine over 0.995 with the floats")
    func normalizeAndQuantize() throws {
        let photo = try #require(try Self.photoPaths()["cat_test_0.png"])
        let plain = try ImageEmbedder(modelPath: Fixtures.path(Self.model)).run(.file(photo))
        var options = ImageEmbedder.Options()
        options.l2Normalize = true
        let unit = try ImageEmbedder(modelPath: Fixtures.path(Self.model), options: options).run(.file(photo))
        #expect(abs(unit.norm - 1) < 1e-5)
        // Python's length of the same output.
        let python = try #require(try Self.python()["cat_test_0.png"])
        let pythonNorm = python.raw.reduce(0.0) { $0 + Double($1 * $1) }.squareRoot() * python.scale
        #expect(abs(Double(plain.norm) - pythonNorm) < 1e-3 && plain.quantizedEmbedding == nil)
        for (a, b) in zip(unit.embedding, plain.embedding) { #expect(abs(a - b / plain.norm) < 1e-6) }
        options.quantize = true
        let bytes = try ImageEmbedder(modelPath: Fixtures.path(Self.model), options: options).run(.file(photo))
        let quantized = try #require(bytes.quantizedEmbedding)
        #expect(quantized == unit.embedding.map { Int8(max(-128, min(127, ($0 * 128).rounded()))) })
        // The floats stay beside the bytes, not replaced by them.
        #expect(bytes.embedding == unit.embedding)
        let kept = try ImageEmbedder.cosineSimilarity(quantized.map(Float.init), unit.embedding)
        print("embedding cat_test_0.png: cosine of the bytes with the floats \(kept)")
        #expect(kept > 0.995)
        #expect(throws: NetRunnerError.self) { try ImageEmbedder.cosineSimilarity([1, 2], [1, 2, 3]) }
        #expect(throws: NetRunnerError.self) { try ImageEmbedder.cosineSimilarity([0, 0], [1, 2]) }
    }

    @Test("The bundle's image.embedding and a bare .tflite's [1, 1, 1, 1024] output both pick the embedder")
    func picksTheTask() throws {
        #expect(ImageTask.kind(type: "image.embedding") == .embedding)
        #expect(try ImageTask.kind(of: LoadedModel(.path(Fixtures.path(Self.bundle)))) == .embedding)
        #expect(try ImageTask.kind(of: LoadedModel(.path(Fixtures.path(Self.model)))) == .embedding)
        // A classifier's [1, 1001] scores stay a classifier's.
        #expect(
            try ImageTask.kind(of: LoadedModel(.path(Fixtures.path("Models/mobilenet_v2_1.0_224_uint8.tflite"))))
                == .classification)
        let definition = try #require(VisionTaskRegistry.definition(verb: "embed"))
        #expect(definition.kind == .embedding && definition.modelNameWithArticle == "an image embedder")
    }

    @Test("A results line holds MediaPipe's embedding and reads back the same")
    func resultsLine() throws {
        var options = ImageEmbedder.Options()
        options.l2Normalize = true
        options.quantize = true
        let photo = try #require(try Self.photoPaths()["dog_test_0.png"])
        let result = try ImageEmbedder(modelPath: Fixtures.path(Self.bundle), options: options).run(.file(photo))
        let line = ResultsLine(image: "dog.png", answer: result.imageAnswer)
        let data = try JSONEncoder().encode(line)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let embedding = try #require(
            (object["inference_results"] as? [String: Any])?["embedding"] as? [String: Any])
        #expect((embedding["float_embedding"] as? [Double])?.count == 1024)
        #expect((embedding["quantized_embedding"] as? [Int])?.count == 1024)
        #expect(embedding["head_index"] as? Int == 0)
        let back = try JSONDecoder().decode(ResultsLine.self, from: data)
        guard case .other(let other) = try #require(back.answer), let decoded = other as? EmbeddingResult else {
            Issue.record("not an embedding: \(String(describing: back.answer))")
            return
        }
        #expect(decoded.embedding == result.embedding && decoded.quantizedEmbedding == result.quantizedEmbedding)
        #expect(decoded.imageWidth == 512 && decoded.imageHeight == 340)
    }

    @Test("A classifier is refused by the embedder with what its output is")
    func refusesAClassifier() throws {
        // A [1, 1001] output is one vector too: the embedder takes it (a classifier's scores are an
        // embedding of sorts); a detector's four outputs are not.
        #expect(throws: NetRunnerError.self) {
            try ImageEmbedder(modelPath: Fixtures.path("Models/face_detection_short_range_ssd.tflite"))
        }
    }

    @Test("MobileNet V2 cut at its penultimate layer: 1280 values equal to Python's tensor, the nearest photo right")
    func penultimateLayer() throws {
        let classifier = try LoadedModel(.path(Fixtures.path("Models/mobilenet_v2_1.0_224_uint8.tflite")))
        let cut = try classifier.penultimateLayer()
        // MobileNet V2 (uint8) pools with MEAN: [1, 1280], which no task claims by its shape.
        #expect(cut.outputShapes?.map(\.dimensions) == [[1, 1280]])
        #expect(ImageTask.declaredKind(of: cut) == .embedding)
        #expect(try ImageTask(model: cut).kind == .embedding)
        let embedder = try ImageEmbedder(model: cut)
        #expect(embedder.dimension == 1280)
        // Python reads the tensor from the whole model, every tensor kept (not from our cut).
        let python = try JSONDecoder().decode(
            [String: PythonEmbedding].self, from: try Fixtures.data("Tests/Fixtures/Embedding/penultimate.python.json"))
        let paths = try Self.photoPaths()
        try #require(python.count == 7)
        var results: [String: EmbeddingResult] = [:]
        for (name, expected) in python.sorted(by: { $0.key < $1.key }) {
            let result = try embedder.run(.file(try #require(paths[name])))
            try #require(result.embedding.count == expected.raw.count)
            let (largest, equal) = Self.steps(result.embedding, from: expected)
            print("penultimate \(name): \(equal) of 1280 values equal Python's, the largest difference \(largest) step")
            #expect(largest <= 1, "\(name)")
            #expect(equal >= 1200, "\(name): \(equal) of 1280")
            results[name] = result
        }
        for (name, test) in results where name.contains("_test_") {
            let nearest = try results.filter { $0.key.contains("_train_") }
                .max {
                    try ImageEmbedder.cosineSimilarity(test, $0.value) < ImageEmbedder.cosineSimilarity(test, $1.value)
                }
            #expect(nearest.map { Self.className($0.key) } == Self.className(name), "\(name)")
        }
        // A model without a classifier's head cannot be cut.
        let pose = try LoadedModel(.path(Fixtures.path("Models/movenet_single_pose_lightning_ptq.tflite")))
        #expect(throws: NetRunnerError.self) { try pose.penultimateLayer() }
    }
}
