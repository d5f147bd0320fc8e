import Foundation
import NetRunnerTestSupport
import Testing

/// `netrunner pose` and `netrunner segment`, and their models bundled with `bundle create --type`
/// and run by `bulk`, which picks the task from the type.
@Suite("pose and segment commands")
struct PoseAndSegmentCommandTests {
    func netrunner(_ arguments: String...) throws -> ProcessResult {
        try ProcessResult.run(Fixtures.netrunner, arguments)
    }

    @Test("pose --json writes inference_results.pose; a classifier given to pose names its shape")
    func pose() throws {
        let model = Fixtures.path("Models/movenet_single_pose_lightning_ptq.tflite")
        let result = try netrunner("pose", "--json", "--model", model, Fixtures.path("Tests/Fixtures/Pose/squat.png"))
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let keypoints = try #require((object["inference_results"] as? [String: Any])?["pose"] as? [[String: Any]])
        #expect(keypoints.count == 17 && keypoints[16]["name"] as? String == "right_ankle")
        let wrong = try netrunner(
            "pose", "--model", Fixtures.path(Fixtures.MobileNet.uint8), Fixtures.path("Tests/Fixtures/Pose/squat.png"))
        #expect(wrong.status != 0 && wrong.stderr.contains("uint8 [1, 1000]"), "\(wrong.stderr)")
    }

    @Test("segment prints the areas; a bundle of type image.segmentation runs through bulk")
    func segment() throws {
        let model = Fixtures.path("Models/deeplabv3_mnv2_pascal_quant.tflite")
        let bird = Fixtures.path("Tests/Fixtures/Segmentation/bird_segmentation.png")
        let result = try netrunner("segment", "--model", model, bird)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("21.19%  bird  55767 px"), "\(result.stdout)")

        let folder = try TemporaryFolder()
        let bundle = folder.path("deeplab.tiobundle")
        let created = try netrunner(
            "bundle", "create", model, "-o", bundle, "--labels",
            Fixtures.path("Models/pascal_voc_segmentation_labels.txt"),
            "--type", "image.segmentation.deeplab")
        #expect(created.status == 0, "\(created.stderr)")
        let csv = folder.path("results.csv")
        let bulk = try netrunner("bulk", Fixtures.path("Tests/Fixtures/Segmentation"), "--model", bundle, "-o", csv)
        #expect(bulk.status == 0, "\(bulk.stderr)")
        let lines = try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\n")
        #expect(lines.contains { $0.contains("bird_segmentation.png,bird,") }, "\(lines)")
    }
}
