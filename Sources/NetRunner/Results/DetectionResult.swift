public import NetRunnerImage

/// What a detector found in one image, and how long each stage took.
public struct DetectionResult: Equatable, Hashable, Sendable {
    /// The detections, best score first, in the original image's pixels.
    public var detections: [Detection]
    /// The original image's width (after EXIF orientation).
    public var imageWidth: Int
    /// The original image's height (after EXIF orientation).
    public var imageHeight: Int
    /// The time each stage took; decoding boxes and suppressing overlaps is the
    /// post-processing.
    public var timings: ResultTimings

    /// Creates a result.
    ///
    /// - Parameters:
    ///   - detections: The detections.
    ///   - imageSize: The original image's size.
    ///   - timings: The time each stage took.
    public init(detections: [Detection], imageSize: PixelSize, timings: ResultTimings) {
        self.detections = detections
        self.imageWidth = imageSize.width
        self.imageHeight = imageSize.height
        self.timings = timings
    }

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
        self.init(
            detections: detections, imageSize: imageSize,
            timings: ResultTimings(
                decoding: decodingMilliseconds, preprocessing: preprocessingMilliseconds,
                inference: inferenceMilliseconds, postprocessing: postprocessingMilliseconds))
    }
}

extension DetectionResult: VisionTaskResult {
    /// This result as an ``ImageAnswer``.
    public var imageAnswer: ImageAnswer { .detection(self) }
}

extension DetectionResult: Codable {
    private enum CodingKeys: String, CodingKey {
        case detections, imageWidth, imageHeight
    }

    /// Reads a result written by ``encode(to:)``.
    ///
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` for a missing or mistyped field.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            detections: try container.decode([Detection].self, forKey: .detections),
            imageSize: PixelSize(
                width: try container.decode(Int.self, forKey: .imageWidth),
                height: try container.decode(Int.self, forKey: .imageHeight)),
            timings: try ResultTimings(fieldsOf: decoder, postprocessing: true))
    }

    /// Writes the detections, the image's size and the four stage times, a field each.
    ///
    /// - Parameter encoder: The encoder.
    /// - Throws: The encoder's errors.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(detections, forKey: .detections)
        try container.encode(imageWidth, forKey: .imageWidth)
        try container.encode(imageHeight, forKey: .imageHeight)
        try timings.encodeFields(to: encoder, postprocessing: true)
    }
}
