import NetRunnerTestSupport
import TensorFlowLite
import Testing

@testable import NetRunner

/// A bare `.tflite` (no `model.json`, no type) is taken for the task its outputs fit, read from
/// the file without compiling it.
@Suite("The task of a bare model")
struct BareModelTaskTests {
    @Test("MoveNet is a pose, DeepLab a segmentation, MobileNet a classifier, BlazeFace a detector")
    func kinds() throws {
        let cases: [(String, ImageTask.Kind, [Int])] = [
            ("Models/movenet_single_pose_lightning_ptq.tflite", .pose, [1, 1, 17, 3]),
            ("Models/deeplabv3_mnv2_pascal_quant.tflite", .segmentation, [1, 513, 513]),
            ("Models/deeplabv3_mnv2_dm05_pascal_quant.tflite", .segmentation, [1, 513, 513]),
            (Fixtures.MobileNet.uint8, .classification, [1, 1000]),
            ("Models/face_detection_short_range.tflite", .detection, [1, 896, 16]),
        ]
        for (path, kind, firstShape) in cases {
            let model = try LoadedModel(.path(Fixtures.path(path)))
            #expect(model.description == nil, "\(path)")
            let shapes = try #require(model.outputShapes, "\(path)")
            #expect(shapes.map(\.dimensions).contains(firstShape), "\(path): \(shapes.map(\.dimensions))")
            #expect(ImageTask.kind(of: model) == kind, "\(path)")
        }
        let deeplab = try LoadedModel(.path(Fixtures.path("Models/deeplabv3_mnv2_pascal_quant.tflite")))
        #expect(deeplab.outputShapes?.first?.dataType == .int64)
        // The task made from it is the one picked, and runs.
        let task = try ImageTask(modelAt: Fixtures.path("Models/movenet_single_pose_lightning_ptq.tflite"))
        #expect(task.kind == .pose)
    }

    @Test("What the claims accept and refuse, shape by shape")
    func claims() throws {
        let pose = try #require(VisionTaskRegistry.definition(for: .pose))
        let segmentation = try #require(VisionTaskRegistry.definition(for: .segmentation))
        #expect(pose.claims(outputs: [([1, 17, 3], .float32)]))
        #expect(!pose.claims(outputs: [([1, 1, 17, 3], .float32), ([1], .float32)]))
        #expect(!pose.claims(outputs: [([1, 1, 6, 56], .float32)]))  // MoveNet multi-pose: not read
        #expect(!pose.claims(outputs: [([1, 51], .float32)]))
        #expect(segmentation.claims(outputs: [([1, 257, 257, 21], .float32)]))
        #expect(segmentation.claims(outputs: [([1, 64, 64], .int32)]))
        #expect(!segmentation.claims(outputs: [([1, 25200, 85], .float32)]))  // YOLO's boxes are float
        #expect(!segmentation.claims(outputs: [([1, 1, 1, 1001], .float32)]))  // a classifier
        #expect(!segmentation.claims(outputs: [([1, 1001], .uInt8)]))
        #expect(!segmentation.claims(outputs: [([1, 64, 64], nil)]))
    }
}
