import FoundationEssentials
import NetRunnerImage
import NetRunnerSupport
import TensorFlowLite

/// Finds one person's body keypoints with a single-pose model such as MoveNet (lightning or
/// thunder): COCO's 17 keypoints, each with its name, its position in the image's pixels and
/// its score.
///
///     var options = ImageTask.Options()
///     options.kind = .pose
///     let task = try ImageTask(modelAt: "Models/movenet_single_pose_lightning_ptq.tflite", options: options)
///     let pose = try PoseEstimator(modelPath: "Models/movenet_single_pose_lightning_ptq.tflite")
///     for keypoint in try pose.run(.file("squat.png")).keypoints { print(keypoint.name, keypoint.x, keypoint.y) }
///
/// The whole image is resized to the input (no crop, as Coral's reference does), the model's
/// `[1, 1, 17, 3]` output (`y, x, score`, positions in [0, 1] of the input) is mapped back to
/// the image. Decoding, preprocessing and accelerators are every task's (``VisionTaskCore``).
///
/// - Note: Not thread-safe (it owns an ``Interpreter``); create one per thread.
public final class PoseEstimator: VisionTask, CoreBackedVisionTask {
    /// Options of a pose estimator: the ``BaseOptions`` and the score under which no pose is
    /// answered.
    public struct Options: VisionTaskOptions {
        /// Threads, accelerator, error logging and decoding (``BaseOptions``).
        public var baseOptions = BaseOptions()

        /// The pose score under which the answer holds no keypoints.
        ///
        /// The score is the mean of the keypoints' scores (``PoseResult/score``). MediaPipe's
        /// pose landmarker answers no pose under its `min_pose_detection_confidence`; 0 (the
        /// default) always answers the model's 17 keypoints, as a plain Python script does.
        /// Values outside 0...1 are clamped.
        public var minPoseScore: Float = 0

        /// Sets ``minPoseScore`` from ``ResultOptions/scoreThreshold`` (the pose is the one
        /// answer, its score the one scored): `bulk --score-threshold` and serve's
        /// `scoreThreshold` drop a pose as they drop a label; `nil` keeps every pose.
        ///
        /// - Parameter results: The answer options.
        public mutating func apply(_ results: ResultOptions) {
            minPoseScore = results.scoreThreshold ?? 0
        }

        /// Creates the default options.
        public init() {}
    }

    /// COCO's 17 keypoint names, in the order MoveNet and PoseNet output them.
    public static let keypointNames = [
        "nose", "left_eye", "right_eye", "left_ear", "right_ear", "left_shoulder", "right_shoulder", "left_elbow",
        "right_elbow", "left_wrist", "right_wrist", "left_hip", "right_hip", "left_knee", "right_knee", "left_ankle",
        "right_ankle",
    ]

    /// The skeleton: pairs of indices into ``keypointNames`` joined by a bone (MoveNet's edges).
    public static let skeleton: [(from: Int, to: Int)] = [
        (0, 1), (0, 2), (1, 3), (2, 4), (0, 5), (0, 6), (5, 7), (7, 9), (6, 8), (8, 10), (5, 6), (5, 11), (6, 12),
        (11, 12), (11, 13), (13, 15), (12, 14), (14, 16),
    ]

    /// ``ImageTask/Kind/pose``.
    public static var kind: ImageTask.Kind { .pose }

    /// The options the estimator was created with.
    public let options: Options
    /// `nil`: keypoints have names, not labels.
    public var labels: LabelMap? { nil }

    let core: VisionTaskCore

    /// Creates a pose estimator for a loaded model.
    ///
    /// - Parameters:
    ///   - model: The model.
    ///   - options: The options.
    /// - Throws: ``InterpreterError`` for a bad model, ``NetRunnerError/notAnImageModel(model:reason:)``
    ///   for an input that is not an image, ``NetRunnerError/unsupportedOutputs(model:reason:)``
    ///   naming the outputs' shapes for a model whose first output is not 17 `(y, x, score)` rows.
    public init(model: LoadedModel, options: Options = Options()) throws {
        let (interpreter, core) = try VisionTaskCore.imageTask(
            for: model, options: options, taskDefaults: .init(cropping: .stretch))
        let outputs = try (0..<interpreter.outputTensorCount).map { try interpreter.output(at: $0) }
        let output = outputs[0]
        let dimensions = output.shape.dimensions
        let fits =
            dimensions.last == 3 && output.shape.elementCount == Self.keypointNames.count * 3
            && [.float32, .uInt8, .int8].contains(output.dataType)
        guard fits else {
            let shapes = outputs.map { "\($0.dataType) \($0.shape.dimensions)" }.joined(separator: ", ")
            throw NetRunnerError.unsupportedOutputs(
                model: model.name,
                reason: "a pose estimator needs a first output of shape [1, 1, 17, 3] (y, x, score of COCO's 17 "
                    + "keypoints, MoveNet single-pose); this model outputs \(shapes)")
        }
        self.core = core
        self.options = options
    }

    /// Finds the keypoints in an image in any form (file, bytes, pixels, decoded or prepared).
    ///
    /// - Parameter image: The image.
    /// - Returns: The 17 keypoints in the original image's pixels, and the time each stage took.
    /// - Throws: ``ImageError`` for an unreadable image, ``InterpreterError`` from the runtime.
    public func run(_ image: ImageInput) throws -> PoseResult {
        let run = try core.run(image)
        let clock = ContinuousClock()
        let start = clock.now
        let values = try core.interpreter.output(at: 0).dequantizedValues()
        var keypoints = Self.keypointNames.indices.map { index in
            let point = run.transform.point(x: values[3 * index + 1], y: values[3 * index])
            return PoseKeypoint(name: Self.keypointNames[index], x: point.x, y: point.y, score: values[3 * index + 2])
        }
        let minimum = min(max(options.minPoseScore, 0), 1)
        if minimum > 0, PoseResult(keypoints: keypoints, imageSize: run.transform.imageSize).score < minimum {
            keypoints = []
        }
        return PoseResult(
            keypoints: keypoints, imageSize: run.transform.imageSize,
            timings: run.timings(postprocessing: clock.now - start))
    }
}

extension ImageTask.Options {
    /// These options as a ``PoseEstimator``'s (see ``taskOptions(_:)``).
    public var poseOptions: PoseEstimator.Options { taskOptions() }
}
