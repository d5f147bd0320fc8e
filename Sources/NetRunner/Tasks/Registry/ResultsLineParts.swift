import NetRunnerImage
import NetRunnerSupport

/// A library task's result that knows the original image's size as `imageWidth` and
/// `imageHeight` (a detector's, a pose's, an embedding's).
protocol ImageSizedResult {
    /// The original image's width in pixels.
    var imageWidth: Int { get set }
    /// The original image's height in pixels.
    var imageHeight: Int { get set }
}

extension DetectionResult: ImageSizedResult {}
extension PoseResult: ImageSizedResult {}
extension EmbeddingResult: ImageSizedResult {}

extension ImageSizedResult {
    /// `imageWidth` by `imageHeight`.
    var pixelSize: PixelSize { PixelSize(width: imageWidth, height: imageHeight) }

    /// The result in the coordinates of an image of another size.
    ///
    /// - Parameters:
    ///   - size: The size it is in.
    ///   - target: The size it is wanted in.
    ///   - scale: Moves the result's coordinates, given the factors of x and y.
    /// - Returns: The result, `target`'s size.
    func resized(from size: PixelSize, to target: PixelSize, scale: (inout Self, Float, Float) -> Void) -> Self {
        var result = self
        scale(&result, Float(target.width) / Float(size.width), Float(target.height) / Float(size.height))
        result.imageWidth = target.width
        result.imageHeight = target.height
        return result
    }
}

extension VisionTaskDefinition where Task.Result: ImageSizedResult {
    /// The result's `imageWidth` by `imageHeight`.
    func imageSize(_ result: Task.Result) -> PixelSize? { result.pixelSize }
}

// The parts of a results line the library's tasks write alike.
extension VisionTaskDefinition {
    /// Writes the task's results under `inference_results.<kind>`.
    ///
    /// - Parameters:
    ///   - results: The task's part of the line.
    ///   - line: The line's container.
    /// - Throws: The encoder's errors.
    func encode(results: some Encodable, in line: inout KeyedEncodingContainer<ResultsLineKey>) throws {
        var nested = line.nestedContainer(keyedBy: ResultsLineKey.self, forKey: .inferenceResults)
        try nested.encode(results, forKey: .results(of: kind))
    }

    /// The line's container and the one of its `inference_results`, to read what
    /// ``encode(results:in:)`` wrote.
    ///
    /// - Parameter decoder: The line's decoder.
    /// - Returns: The two containers.
    /// - Throws: `DecodingError` for a line with no `inference_results` object.
    func resultsContainers(
        of decoder: any Decoder
    ) throws -> (line: KeyedDecodingContainer<ResultsLineKey>, results: KeyedDecodingContainer<ResultsLineKey>) {
        let line = try decoder.container(keyedBy: ResultsLineKey.self)
        return (line, try line.nestedContainer(keyedBy: ResultsLineKey.self, forKey: .inferenceResults))
    }
}

extension KeyedEncodingContainer<ResultsLineKey> {
    /// Writes `image_width` and `image_height`.
    ///
    /// - Parameter imageSize: The original image's size.
    /// - Throws: The encoder's errors.
    mutating func encode(imageSize: PixelSize) throws {
        try encode(imageSize.width, forKey: "image_width")
        try encode(imageSize.height, forKey: "image_height")
    }
}

extension KeyedDecodingContainer<ResultsLineKey> {
    /// Reads `image_width` and `image_height`.
    ///
    /// - Returns: The original image's size.
    /// - Throws: `DecodingError` for a missing or mistyped one.
    func decodeImageSize() throws -> PixelSize {
        PixelSize(
            width: try decode(Int.self, forKey: "image_width"), height: try decode(Int.self, forKey: "image_height"))
    }
}

/// The stage times of an answer, as `classify` and `detect` print them.
///
/// - Parameter timings: The answer's times.
/// - Returns: Decoding, preprocessing and inference, in milliseconds.
func stageTimes(_ timings: ResultTimings) -> String {
    "decode \(fixedDecimals(timings.decoding, 1)) ms, preprocess \(fixedDecimals(timings.preprocessing, 1)) ms, "
        + "inference \(fixedDecimals(timings.inference, 1)) ms"
}
