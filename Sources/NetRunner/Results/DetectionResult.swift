public import NetRunnerImage

/// What a detector found in one image, and how long each stage took.
public struct DetectionResult: Equatable, Hashable, Sendable, Codable {
    /// The detections, best score first, in the original image's pixels.
    public var detections: [Detection]
    /// The original image's width (after EXIF orientation).
    public var imageWidth: Int
    /// The original image's height (after EXIF orientation).
    public var imageHeight: Int
    /// Milliseconds spent decoding the file.
    public var decodingMilliseconds: Double
    /// Milliseconds spent resizing and converting the image to the input tensor.
    public var preprocessingMilliseconds: Double
    /// Milliseconds spent in the runtime.
    public var inferenceMilliseconds: Double
    /// Milliseconds spent decoding boxes and suppressing overlaps.
    public var postprocessingMilliseconds: Double

    /// Creates a result.
    ///
    /// - Parameters:
    ///   - detections: The detections.
    ///   - imageSize: The original image's size.
    ///   - decodingMilliseconds: Decoding time.
    ///   - preprocessingMilliseconds: Preprocessing time.
    ///   - inferenceMilliseconds: Inference time.
    ///   - postprocessingMilliseconds: Post-processing time.
    public init(
        detections: [Detection], imageSize: PixelSize, decodingMilliseconds: Double, preprocessingMilliseconds: Double,
        inferenceMilliseconds: Double, postprocessingMilliseconds: Double
    ) {
        self.detections = detections
        self.imageWidth = imageSize.width
        self.imageHeight = imageSize.height
        self.decodingMilliseconds = decodingMilliseconds
        self.preprocessingMilliseconds = preprocessingMilliseconds
        self.inferenceMilliseconds = inferenceMilliseconds
        self.postprocessingMilliseconds = postprocessingMilliseconds
    }
}

extension DetectionResult: VisionTaskResult {
    /// The four stage times as one value.
    public var timings: ResultTimings {
        ResultTimings(
            decoding: decodingMilliseconds, preprocessing: preprocessingMilliseconds, inference: inferenceMilliseconds,
            postprocessing: postprocessingMilliseconds)
    }

    /// This result as an ``ImageAnswer``.
    public var imageAnswer: ImageAnswer { .detection(self) }
}
