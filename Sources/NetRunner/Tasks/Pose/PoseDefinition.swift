import NetRunnerImage
import NetRunnerSupport
import TensorFlowLite

/// The pose estimator as a registered task: ``PoseEstimator`` and ``PoseResult``.
///
/// Its part of a results line is `inference_results.pose`, the keypoints in COCO's order, each
/// `{"name", "x", "y", "score"}` with `x` and `y` in the image's pixels, beside `image_width`,
/// `image_height` and `skeleton`, the bones as pairs of indices into the keypoints. Keypoints
/// scoring under ``shownScore`` are kept in the result but not drawn, nor counted in the pose's
/// box.
struct PoseDefinition: LibraryTaskDefinition {
    typealias Task = PoseEstimator

    /// The score under which a keypoint is not drawn (MoveNet's demos use 0.11 to 0.3).
    static let shownScore: Float = 0.2

    static let names = TaskNames(kind: .pose, verb: "pose", model: "pose estimator", withArticle: "a pose estimator")

    var resultsSchema: String {
        #"""
        {"type": "array", "description": "One person's keypoints in COCO's order (nose ... right_ankle), x and y in the image's pixels.",
          "items": {"type": "object", "required": ["name", "x", "y", "score"], "additionalProperties": false, "properties": {
            "name": {"type": "string"}, "x": {"type": "number"}, "y": {"type": "number"}, "score": {"type": "number"}}}}
        """#
    }
    var locatesInImage: Bool { true }
    var namesClasses: Bool { false }
    var assumedPreprocessing: String {
        "RGB, the whole image stretched to the input (no crop), raw bytes for uint8 inputs (MoveNet's convention)"
    }

    func names(modelType: String) -> Bool {
        modelType.hasPrefix("image.pose")
    }

    /// One output of COCO's 17 keypoints, 3 values each (MoveNet's `[1, 1, 17, 3]`).
    func claims(outputs: [(dimensions: [Int], dataType: Tensor.DataType?)]) -> Bool {
        guard outputs.count == 1, let dimensions = outputs.first?.dimensions, dimensions.last == 3 else { return false }
        return dimensions.allSatisfy { $0 > 0 && $0 <= PoseEstimator.keypointNames.count }
            && dimensions.reduce(1, *) == PoseEstimator.keypointNames.count * 3
    }

    func makeTask(model: LoadedModel, options: ImageTask.Options) throws -> PoseEstimator {
        try PoseEstimator(model: model, options: options.poseOptions)
    }

    func encode(_ result: PoseResult, to encoder: any Encoder) throws {
        var line = encoder.container(keyedBy: ResultsLineKey.self)
        try line.encode(imageSize: result.pixelSize)
        // The bones to draw, as pairs of indices into the keypoints: a client needs no table of
        // its own (COCO's `skeleton`, 0-based).
        try line.encode(PoseEstimator.skeleton.map { [$0.from, $0.to] }, forKey: "skeleton")
        try encode(results: result.keypoints, in: &line)
    }

    func decode(from decoder: any Decoder, timings: ResultTimings) throws -> PoseResult {
        let (line, results) = try resultsContainers(of: decoder)
        return PoseResult(
            keypoints: try results.decode([PoseKeypoint].self, forKey: .results(of: kind)),
            imageSize: try line.decodeImageSize(), timings: timings)
    }

    func csvFields(_ result: PoseResult) -> (answer: String, score: String, results: String) {
        let keypoints = result.keypoints.map { "\($0.name):\($0.score)@\($0.x) \($0.y)" }
        return ("pose", String(result.score), keypoints.joined(separator: ";"))
    }

    func textLines(_ result: PoseResult, image: String) -> [String] {
        let timing = stageTimes(result.timings)
        var lines = [
            "\(image)  \(result.imageWidth)x\(result.imageHeight)  pose score \(fixedDecimals(Double(result.score), 3))"
                + "  (\(timing))"
        ]
        if result.keypoints.isEmpty { lines.append("  no pose (its score is under the minimum pose score)") }
        for keypoint in result.keypoints {
            lines.append(
                "  \(fixedDecimals(Double(keypoint.score), 3))  \(keypoint.name)  "
                    + "(\(fixedDecimals(Double(keypoint.x), 1)), \(fixedDecimals(Double(keypoint.y), 1)))")
        }
        return lines
    }

    func summary(_ result: PoseResult) -> String {
        let shown = result.keypoints.filter { $0.score >= Self.shownScore }
        return "pose \(fixedDecimals(Double(result.score), 2)), \(shown.count) of \(result.keypoints.count) keypoints"
    }

    func shownAnswers(_ result: PoseResult) -> [(label: String, score: Float, box: [Float]?)] {
        let shown = result.keypoints.filter { $0.score >= Self.shownScore }
        guard let minX = shown.map(\.x).min(), let maxX = shown.map(\.x).max(), let minY = shown.map(\.y).min(),
            let maxY = shown.map(\.y).max()
        else { return [("pose", result.score, nil)] }
        return [("pose", result.score, [minX, minY, maxX - minX, maxY - minY])]
    }

    func draw(_ result: PoseResult, on image: PixelBuffer) throws(ImageError) -> PixelBuffer {
        var canvas = image.format == .rgb24 ? image : image.converted(to: .rgb24)
        let thickness = max(2, min(canvas.width, canvas.height) / 150)
        let keypoints = result.keypoints
        for (index, edge) in PoseEstimator.skeleton.enumerated()
        where edge.from < keypoints.count && edge.to < keypoints.count {
            let (a, b) = (keypoints[edge.from], keypoints[edge.to])
            guard a.score >= Self.shownScore, b.score >= Self.shownScore else { continue }
            Self.line(from: a, to: b, thickness: thickness, color: Annotator.color(forClass: index), on: &canvas)
        }
        for keypoint in keypoints where keypoint.score >= Self.shownScore {
            guard let x = Self.pixel(keypoint.x), let y = Self.pixel(keypoint.y) else { continue }
            let radius = thickness + 1
            canvas.fill(PixelRect(x: x - radius, y: y - radius, width: 2 * radius, height: 2 * radius), color: .white)
        }
        return canvas
    }

    func scaled(_ result: PoseResult, from size: PixelSize, to target: PixelSize) -> PoseResult {
        result.resized(from: size, to: target) { result, sx, sy in
            result.keypoints = result.keypoints.map {
                PoseKeypoint(name: $0.name, x: $0.x * sx, y: $0.y * sy, score: $0.score)
            }
        }
    }

    /// A bone: squares of `thickness` stepped along the segment.
    private static func line(
        from a: PoseKeypoint, to b: PoseKeypoint, thickness: Int, color: PixelColor, on canvas: inout PixelBuffer
    ) {
        guard let x0 = pixel(a.x), let y0 = pixel(a.y), let x1 = pixel(b.x), let y1 = pixel(b.y) else { return }
        let steps = min(max(abs(x1 - x0), abs(y1 - y0), 1), 100_000)
        for step in 0...steps {
            let x = x0 + (x1 - x0) * step / steps
            let y = y0 + (y1 - y0) * step / steps
            canvas.fill(
                PixelRect(x: x - thickness / 2, y: y - thickness / 2, width: thickness, height: thickness), color: color
            )
        }
    }

    /// A coordinate as a pixel index; `nil` for one a model made up (not finite, far off).
    private static func pixel(_ value: Float) -> Int? {
        guard value.isFinite, abs(value) < 1_000_000 else { return nil }
        return Int(value.rounded())
    }
}
