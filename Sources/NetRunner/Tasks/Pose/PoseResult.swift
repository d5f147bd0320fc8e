public import NetRunnerImage

extension ImageTask.Kind {
    /// It finds a person's body keypoints (``PoseEstimator``).
    public static let pose = ImageTask.Kind("pose")
}

/// What a ``PoseEstimator`` answers for one image: one person's keypoints, in COCO's order.
public struct PoseResult: RegisteredTaskResult {
    /// ``ImageTask/Kind/pose``.
    public static let kind = ImageTask.Kind.pose

    /// The keypoints, in the order of ``PoseEstimator/keypointNames``.
    public var keypoints: [PoseKeypoint]
    /// The original image's width in pixels.
    public var imageWidth: Int
    /// The original image's height in pixels.
    public var imageHeight: Int
    /// The time each stage took; turning the output into keypoints is the post-processing.
    public var timings: ResultTimings

    /// Creates a result.
    ///
    /// - Parameters:
    ///   - keypoints: The keypoints.
    ///   - imageSize: The original image's size.
    ///   - timings: The time each stage took.
    public init(keypoints: [PoseKeypoint], imageSize: PixelSize, timings: ResultTimings) {
        self.keypoints = keypoints
        self.imageWidth = imageSize.width
        self.imageHeight = imageSize.height
        self.timings = timings
    }

    /// Creates a result.
    ///
    /// - Parameters:
    ///   - keypoints: The keypoints.
    ///   - imageSize: The original image's size.
    ///   - decodingMilliseconds: Decoding time.
    ///   - preprocessingMilliseconds: Preprocessing time.
    ///   - inferenceMilliseconds: Inference time.
    ///   - postprocessingMilliseconds: Post-processing time.
    public init(
        keypoints: [PoseKeypoint], imageSize: PixelSize, decodingMilliseconds: Double = 0,
        preprocessingMilliseconds: Double = 0, inferenceMilliseconds: Double = 0, postprocessingMilliseconds: Double = 0
    ) {
        self.init(
            keypoints: keypoints, imageSize: imageSize,
            timings: ResultTimings(
                decoding: decodingMilliseconds, preprocessing: preprocessingMilliseconds,
                inference: inferenceMilliseconds, postprocessing: postprocessingMilliseconds))
    }

    /// The pose's score: the mean of its keypoints' scores.
    public var score: Float {
        keypoints.isEmpty ? 0 : keypoints.map(\.score).reduce(0, +) / Float(keypoints.count)
    }

    /// The keypoint of a name (`left_wrist`), if the pose has it.
    ///
    /// - Parameter name: The keypoint's name.
    /// - Returns: The keypoint, or `nil`.
    public func keypoint(named name: String) -> PoseKeypoint? {
        keypoints.first { $0.name == name }
    }
}
