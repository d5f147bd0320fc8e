import NetRunnerImage
import NetRunnerSupport

/// The detector as a registered task: ``ObjectDetector`` and ``DetectionResult``.
struct DetectionDefinition: LibraryTaskDefinition {
    typealias Task = ObjectDetector

    static let names = TaskNames(kind: .detection, verb: "detect", model: "detector", withArticle: "an object detector")

    var resultsSchema: String {
        #"""
        {"type": "array", "description": "Best first.", "items": {
          "type": "object", "required": ["box", "index", "score"], "additionalProperties": false, "properties": {
            "box": {"type": "array", "items": {"type": "number"}, "description": "[x, y, width, height] in pixels."},
            "index": {"type": "integer"},
            "label": {"type": "string"},
            "display_name": {"type": "string"},
            "score": {"type": "number"},
            "keypoints": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}}}}}
        """#
    }
    var locatesInImage: Bool { true }
    var assumedPreprocessing: String {
        "RGB, letterboxing for raw anchor outputs and stretching for SSD outputs, raw bytes for uint8 "
            + "inputs and values in [-1, 1] for float (the SSD example's and MediaPipe's conventions)"
    }

    func names(modelType: String) -> Bool {
        modelType.contains("detection")
    }

    func makeTask(model: LoadedModel, options: ImageTask.Options) throws -> ObjectDetector {
        try ObjectDetector(model: model, options: options.detectorOptions)
    }

    /// A detection as a results line writes it: COCO's `[x, y, width, height]` in pixels.
    private struct DetectionLine: Codable {
        var label: String?
        var index: Int
        var score: Float
        var box: [Float]
        var keypoints: [[Float]]?
    }

    func encode(_ result: DetectionResult, to encoder: any Encoder) throws {
        var line = encoder.container(keyedBy: ResultsLineKey.self)
        try line.encode(imageSize: result.pixelSize)
        let lines = result.detections.map { detection in
            let box = detection.boundingBox
            let best = detection.categories.first
            return DetectionLine(
                label: best?.label, index: best?.index ?? 0, score: best?.score ?? 0,
                box: [box.minX, box.minY, box.width, box.height],
                keypoints: detection.keypoints.isEmpty ? nil : detection.keypoints.map { [$0.x, $0.y] })
        }
        try encode(results: lines, in: &line)
    }

    func decode(from decoder: any Decoder, timings: ResultTimings) throws -> DetectionResult {
        let (line, results) = try resultsContainers(of: decoder)
        let lines = try results.decode([DetectionLine].self, forKey: .results(of: kind))
        let detections = try lines.map { line in
            guard line.box.count == 4 else {
                throw DecodingError.dataCorruptedError(
                    forKey: .results(of: kind), in: results, debugDescription: "a box is [x, y, width, height]")
            }
            return Detection(
                boundingBox: BoundingBox(
                    minX: line.box[0], minY: line.box[1], maxX: line.box[0] + line.box[2],
                    maxY: line.box[1] + line.box[3]),
                categories: [Category(index: line.index, score: line.score, label: line.label)],
                keypoints: (line.keypoints ?? []).compactMap { $0.count == 2 ? Keypoint(x: $0[0], y: $0[1]) : nil })
        }
        return DetectionResult(
            detections: detections,
            imageSize: try line.decodeImageSize(), timings: timings)
    }

    func csvFields(_ result: DetectionResult) -> (answer: String, score: String, results: String) {
        let results = result.detections.map { detection in
            let box = detection.boundingBox
            let best = detection.categories.first
            return "\(best?.label ?? String(best?.index ?? 0)):\(best?.score ?? 0)"
                + "@\(box.minX) \(box.minY) \(box.width) \(box.height)"
        }
        return (String(result.detections.count), "", results.joined(separator: ";"))
    }

    func textLines(_ result: DetectionResult, image: String) -> [String] {
        let timing = stageTimes(result.timings)
        var lines = ["\(image)  \(result.imageWidth)x\(result.imageHeight)  (\(timing))"]
        if result.detections.isEmpty { lines.append("  (nothing above the threshold)") }
        for detection in result.detections {
            let box = detection.boundingBox
            let name =
                detection.categories.first.flatMap { $0.displayName ?? $0.label }
                ?? "class \(detection.categories.first?.index ?? 0)"
            let coordinates = [box.minX, box.minY, box.maxX, box.maxY].map { fixedDecimals(Double($0), 1) }
            lines.append(
                "  \(fixedDecimals(Double(detection.score), 3))  \(name)  "
                    + "box (\(coordinates[0]), \(coordinates[1])) - (\(coordinates[2]), \(coordinates[3]))")
        }
        return lines
    }

    func summary(_ result: DetectionResult) -> String {
        let boxes = result.detections.map { detection in
            let box = detection.boundingBox
            let name = detection.categories.first.flatMap { $0.displayName ?? $0.label } ?? "object"
            return "\(name) \(fixedDecimals(Double(detection.score), 2)) "
                + "(\(Int(box.minX.rounded())),\(Int(box.minY.rounded())))-(\(Int(box.maxX.rounded())),\(Int(box.maxY.rounded())))"
        }
        return boxes.isEmpty ? "(nothing)" : "\(boxes.count): " + boxes.joined(separator: ", ")
    }

    func shownAnswers(_ result: DetectionResult) -> [(label: String, score: Float, box: [Float]?)] {
        result.detections.map { detection in
            let box = detection.boundingBox
            let best = detection.categories.first
            return (
                best?.displayName ?? best?.label ?? "class \(best?.index ?? 0)", detection.score,
                [box.minX, box.minY, box.width, box.height]
            )
        }
    }

    func draw(_ result: DetectionResult, on image: PixelBuffer) throws(ImageError) -> PixelBuffer {
        try Annotator.draw(result.detections, on: image)
    }

    func scaled(_ result: DetectionResult, from size: PixelSize, to target: PixelSize) -> DetectionResult {
        result.resized(from: size, to: target) { result, sx, sy in
            result.detections = result.detections.map { detection in
                var detection = detection
                let box = detection.boundingBox
                detection.boundingBox = BoundingBox(
                    minX: box.minX * sx, minY: box.minY * sy, maxX: box.maxX * sx, maxY: box.maxY * sy)
                detection.keypoints = detection.keypoints.map { Keypoint(x: $0.x * sx, y: $0.y * sy) }
                return detection
            }
        }
    }
}
