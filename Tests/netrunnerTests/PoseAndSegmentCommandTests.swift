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

    @Test("--min-pose-score answers no pose for a photo without a person, the 17 keypoints for one with")
    func minimumPoseScore() throws {
        let model = Fixtures.path("Models/movenet_single_pose_lightning_ptq.tflite")
        // The espresso photo's pose scores 0.110 (MoveNet always answers 17 keypoints); the squat's far more.
        let cup = try netrunner(
            "pose", "--model", model, "--min-pose-score", "0.3", Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg"))
        #expect(cup.status == 0, "\(cup.stderr)")
        #expect(cup.stdout.contains("no pose (its score is under the minimum pose score)"), "\(cup.stdout)")
        #expect(!cup.stdout.contains("nose"), "\(cup.stdout)")
        let json = try netrunner(
            "pose", "--json", "--model", model, "--min-pose-score", "0.3",
            Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg"), Fixtures.path("Tests/Fixtures/Pose/squat.png"))
        #expect(json.status == 0, "\(json.stderr)")
        let counts = try json.stdout.split(separator: "\n").map { line in
            let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return try #require((object["inference_results"] as? [String: Any])?["pose"] as? [[String: Any]]).count
        }
        #expect(counts == [0, 17], "\(json.stdout)")
        // Without it, the 17 keypoints, as Python answers them.
        let plain = try netrunner("pose", "--model", model, Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg"))
        #expect(plain.status == 0 && plain.stdout.contains("pose score 0.110") && plain.stdout.contains("nose"))
        for wrong in ["1.5", "-0.1", "nan"] {
            let refused = try netrunner("pose", "--model", model, "--min-pose-score", wrong, Self.squat)
            #expect(refused.status != 0 && refused.stderr.contains("--min-pose-score"), "\(wrong): \(refused.stderr)")
        }
    }

    static let squat = Fixtures.path("Tests/Fixtures/Pose/squat.png")

    @Test("segment prints the areas; a bundle of type image.segmentation runs through bulk")
    func segment() throws {
        let model = Fixtures.path("Models/deeplabv3_mnv2_pascal_quant.tflite")
        let bird = Fixtures.path("Tests/Fixtures/Segmentation/bird_segmentation.png")
        let labels = Fixtures.path("Models/pascal_voc_segmentation_labels.txt")
        let result = try netrunner("segment", "--model", model, "--labels", labels, bird)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("21.19%  bird  55767 px"), "\(result.stdout)")
        // Without labels: class indices, and one notice saying so.
        let bare = try netrunner("segment", "--model", model, bird)
        #expect(bare.status == 0 && bare.stdout.contains("21.19%  class 3  55767 px"), "\(bare.stdout)")
        #expect(bare.stderr.components(separatedBy: "classes are shown by index").count == 2, "\(bare.stderr)")

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

    @Test("serve's /segment?mask=image is segment --json's answer; its default mask is the model's 513x513")
    func serveMaskAsCommand() async throws {
        let photo = Fixtures.path("Tests/Fixtures/Pose/squat.png")
        let command = try netrunner(
            "segment", "--json", "--model", Fixtures.path("Models/bundles/deeplabv3_mnv2_pascal_quant.tiobundle"), photo
        )
        #expect(command.status == 0, "\(command.stderr)")
        let printed = try #require(JSONSerialization.jsonObject(with: Data(command.stdout.utf8)) as? [String: Any])
        func segmentation(_ line: [String: Any]) -> [String: Any] {
            (line["inference_results"] as? [String: Any])?["segmentation"] as? [String: Any] ?? [:]
        }
        let mask = { (line: [String: Any]) in (segmentation(line)["mask"] as? [String: Any]) ?? [:] }
        #expect(mask(printed)["width"] as? Int == 500 && mask(printed)["height"] as? Int == 610)
        try await LiveServer.serve { server in
            let route = "/v1/models/deeplabv3-mnv2-pascal-quant/segment"
            let body = try Fixtures.data("Tests/Fixtures/Pose/squat.png")
            let full = try await server.request(route + "?mask=image", method: "POST", body: body).json
            // The same PNG bytes and areas as the command's.
            #expect(mask(full)["data"] as? String == mask(printed)["data"] as? String)
            let areas = { (line: [String: Any]) in
                (segmentation(line)["areas"] as? [[String: Any]] ?? []).map {
                    "\($0["index"] ?? ""):\($0["pixels"] ?? "")"
                }
            }
            #expect(areas(full) == areas(printed) && !areas(full).isEmpty)
            let small = try await server.request(route, method: "POST", body: body).json
            #expect(mask(small)["width"] as? Int == 513 && mask(small)["height"] as? Int == 513)
            #expect(small["image_width"] as? Int == 500 && small["image_height"] as? Int == 610)
            #expect(areas(small) == areas(printed))
        }
    }

    @Test("bulk and run on a bare MoveNet or DeepLab .tflite pick the task from the outputs' shapes")
    func bareModels() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let movenet = Fixtures.path("Models/movenet_single_pose_lightning_ptq.tflite")
        let deeplab = Fixtures.path("Models/deeplabv3_mnv2_dm05_pascal_quant.tflite")
        let poses = folder.path("poses.jsonl")
        let bulk = try netrunner("bulk", Fixtures.path("Tests/Fixtures/Pose"), "--model", movenet, "-o", poses)
        #expect(bulk.status == 0, "\(bulk.stderr)")
        #expect(bulk.stderr.components(separatedBy: "has no metadata and no model.json").count == 2, "\(bulk.stderr)")
        #expect(!bulk.stderr.contains("classes are shown by index"), "keypoints have names: \(bulk.stderr)")
        let line = try #require(String(contentsOfFile: poses, encoding: .utf8).split(separator: "\n").first)
        let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let keypoints = try #require((object["inference_results"] as? [String: Any])?["pose"] as? [[String: Any]])
        #expect(keypoints.count == 17 && object["image_width"] as? Int == 500)

        let masks = folder.path("masks.csv")
        let segmented = try netrunner(
            "bulk", Fixtures.path("Tests/Fixtures/Segmentation"), "--model", deeplab, "-o", masks)
        #expect(segmented.status == 0, "\(segmented.stderr)")
        #expect(segmented.stderr.contains("classes are shown by index"), "\(segmented.stderr)")
        let rows = try String(contentsOfFile: masks, encoding: .utf8).split(separator: "\n")
        #expect(rows.contains { $0.contains("bird_segmentation.png,class 3,") }, "\(rows)")

        let run = try netrunner("run", movenet, Fixtures.path("Tests/Fixtures/Pose/squat.png"), "--json")
        #expect(run.status == 0, "\(run.stderr)")
        let printed = try #require(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(((printed["inference_results"] as? [String: Any])?["pose"] as? [Any])?.count == 17, "\(run.stdout)")
        let areas = try netrunner("run", deeplab, Fixtures.path("Tests/Fixtures/Segmentation/bird_segmentation.png"))
        #expect(areas.status == 0 && areas.stdout.contains("class 3"), "\(areas.stdout)")
        #expect(areas.stderr.components(separatedBy: "classes are shown by index").count == 2, "\(areas.stderr)")
    }
}
