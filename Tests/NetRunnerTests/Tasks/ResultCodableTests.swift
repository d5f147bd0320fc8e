import Foundation
import NetRunner
import NetRunnerImage
import Testing

/// The JSON of the classifier's and the detector's `Codable` results.
///
/// One field per stage time (`inferenceMilliseconds`), as when the results stored the times as
/// fields: the expected text is what those fields' synthesized `Codable` wrote.
@Suite("Results' Codable form")
struct ResultCodableTests {
    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static let category = #"{"displayName":"espresso","index":967,"label":"espresso","score":0.5}"#

    @Test("A classification result's JSON: its categories, three times and its batch, read back equal")
    func classification() throws {
        var result = ClassificationResult(
            categories: [Category(index: 967, score: 0.5, label: "espresso", displayName: "espresso")],
            decodingMilliseconds: 1.5, preprocessingMilliseconds: 2.25, inferenceMilliseconds: 4)
        #expect(result.timings == ResultTimings(decoding: 1.5, preprocessing: 2.25, inference: 4))
        let alone = try Self.json(result)
        #expect(
            alone == #"{"categories":[\#(Self.category)],"decodingMilliseconds":1.5,"#
                + #""inferenceMilliseconds":4,"preprocessingMilliseconds":2.25}"#)
        #expect(try JSONDecoder().decode(ClassificationResult.self, from: Data(alone.utf8)) == result)
        result.batch = InferenceBatch(size: 4, inferenceMilliseconds: 16)
        let batched = try Self.json(result)
        #expect(
            batched == #"{"batch":{"inferenceMilliseconds":16,"size":4},"categories":[\#(Self.category)],"#
                + #""decodingMilliseconds":1.5,"inferenceMilliseconds":4,"preprocessingMilliseconds":2.25}"#)
        #expect(try JSONDecoder().decode(ClassificationResult.self, from: Data(batched.utf8)) == result)
    }

    @Test("A detection result's JSON: its boxes, the image's size and four times, read back equal")
    func detection() throws {
        let result = DetectionResult(
            detections: [
                Detection(
                    boundingBox: BoundingBox(minX: 1, minY: 2, maxX: 30, maxY: 40),
                    categories: [Category(index: 0, score: 0.75, label: "face")])
            ],
            imageSize: PixelSize(width: 64, height: 48), decodingMilliseconds: 1.5, preprocessingMilliseconds: 2.25,
            inferenceMilliseconds: 4, postprocessingMilliseconds: 0.5)
        #expect(result.timings == ResultTimings(decoding: 1.5, preprocessing: 2.25, inference: 4, postprocessing: 0.5))
        let text = try Self.json(result)
        #expect(
            text == #"{"decodingMilliseconds":1.5,"#
                + #""detections":[{"boundingBox":{"maxX":30,"maxY":40,"minX":1,"minY":2},"#
                + #""categories":[{"index":0,"label":"face","score":0.75}],"keypoints":[]}],"imageHeight":48,"#
                + #""imageWidth":64,"inferenceMilliseconds":4,"postprocessingMilliseconds":0.5,"#
                + #""preprocessingMilliseconds":2.25}"#)
        #expect(try JSONDecoder().decode(DetectionResult.self, from: Data(text.utf8)) == result)
    }
}
