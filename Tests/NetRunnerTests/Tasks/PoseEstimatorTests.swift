import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

@testable import NetRunner

/// MoveNet single-pose on Coral's squat photo, against Coral's reference CSV and Python's
/// answer (`tools/pose/record.sh`: ai_edge_litert, the whole image resized with Pillow BILINEAR).
@Suite("Pose estimation")
struct PoseEstimatorTests {
    static let model = "Models/movenet_single_pose_lightning_ptq.tflite"
    static let photo = "Tests/Fixtures/Pose/squat.png"

    /// Coral's reference: keypoint id, score, x, y (x and y in [0, 1] of the image).
    static func coralReference() throws -> [(score: Float, x: Float, y: Float)] {
        let text = try String(
            contentsOfFile: Fixtures.path("Tests/Fixtures/Pose/movenet_single_pose_lightning_ptq_reference.csv"),
            encoding: .utf8)
        return text.split(separator: "\n").dropFirst().map { line in
            let fields = line.split(separator: ",").compactMap { Float($0) }
            return (fields[3], fields[4], fields[5])
        }
    }

    @Test("MoveNet's 17 keypoints on squat: within 0.03 of Coral's reference and of Python's answer")
    func squat() throws {
        let estimator = try PoseEstimator(modelPath: Fixtures.path(Self.model))
        #expect(estimator.preprocessing.cropping == .stretch)
        let result = try estimator.run(.file(Fixtures.path(Self.photo)))
        #expect(result.imageWidth == 500 && result.imageHeight == 610)
        #expect(result.keypoints.map(\.name) == PoseEstimator.keypointNames)

        let coral = try Self.coralReference()
        try #require(coral.count == 17)
        var worstCoral: Float = 0
        for (keypoint, expected) in zip(result.keypoints, coral) {
            let error = max(abs(keypoint.x / 500 - expected.x), abs(keypoint.y / 610 - expected.y))
            worstCoral = max(worstCoral, error)
            #expect(error <= 0.03, "\(keypoint.name): \(keypoint.x / 500), \(keypoint.y / 610) vs \(expected)")
        }

        let python = try JSONDecoder().decode(
            [[Float]].self, from: try Fixtures.data("Tests/Fixtures/Pose/squat.python.json"))
        var worstPython: Float = 0
        var worstScore: Float = 0
        for (keypoint, expected) in zip(result.keypoints, python) {
            worstPython = max(worstPython, abs(keypoint.x - expected[0]) / 500, abs(keypoint.y - expected[1]) / 610)
            worstScore = max(worstScore, abs(keypoint.score - expected[2]))
        }
        print(
            "pose: largest error vs Coral's CSV \(worstCoral), vs Python \(worstPython) (normalised), score \(worstScore)"
        )
        #expect(worstPython <= 0.01 && worstScore <= 0.05)
    }

    @Test("A model type image.pose.* picks the task; ImageTask runs it and draws the skeleton")
    func throughImageTask() throws {
        #expect(ImageTask.kind(type: "image.pose.movenet") == .pose)
        #expect(VisionTaskRegistry.definition(verb: "pose")?.locatesInImage == true)
        var options = ImageTask.Options()
        options.kind = .pose
        let task = try ImageTask(modelAt: Fixtures.path(Self.model), options: options)
        let answer = try task.run(fileAt: Fixtures.path(Self.photo))
        let result = try #require(answer.result as? PoseResult)
        #expect(result.score > 0.5)
        let image = try ImageDecoder.decode(contentsOf: Fixtures.path(Self.photo)).pixels
        let drawn = try Annotator.draw(answer, on: image)
        #expect(drawn.size == image.size && drawn != image.converted(to: .rgb24))
        let half = PixelSize(width: 250, height: 305)
        let scaled = try #require(answer.scaled(from: image.size, to: half).result as? PoseResult)
        #expect(abs(scaled.keypoints[0].x - result.keypoints[0].x / 2) < 1e-3 && scaled.imageWidth == 250)
    }

    @Test("A classifier loaded as a pose estimator is refused, naming its output's shape")
    func wrongModel() throws {
        var options = ImageTask.Options()
        options.kind = .pose
        let error = #expect(throws: NetRunnerError.self) {
            _ = try ImageTask(modelAt: Fixtures.path(Fixtures.MobileNet.uint8), options: options)
        }
        let message = error?.localizedDescription ?? ""
        #expect(message.contains("[1, 1, 17, 3]") && message.contains("uint8 [1, 1000]"), "\(message)")
    }

    @Test("The results line round-trips: inference_results.pose lists the keypoints")
    func resultsLine() throws {
        let result = PoseResult(
            keypoints: [
                PoseKeypoint(name: "nose", x: 288.8, y: 204.9, score: 0.36),
                PoseKeypoint(name: "left_eye", x: 295, y: 189.9, score: 0.8),
            ], imageSize: PixelSize(width: 500, height: 610), decodingMilliseconds: 1.5, preprocessingMilliseconds: 2,
            inferenceMilliseconds: 3)
        let record = ResultsLine(image: "squat.png", model: "movenet", answer: result.imageAnswer)
        let data = try JSONEncoder().encode(record)
        let object = try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
        let keypoints = try #require((object["inference_results"] as? [String: Any])?["pose"] as? [[String: Any]])
        #expect(keypoints.count == 2 && keypoints[1]["name"] as? String == "left_eye")
        #expect(object["image_width"] as? Int == 500)
        #expect(try JSONDecoder().decode(ResultsLine.self, from: data) == record)
    }
}
