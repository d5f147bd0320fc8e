import FoundationEssentials
import NetRunner

/// How `detect` prints a result: a block of text per image, or one JSON line per image in the
/// shape of a `bulk` results line (docs/json.md).
enum DetectionOutput {
    static func print(_ result: DetectionResult, file: String, json: Bool) throws {
        if json {
            try ClassificationOutput.printLine(BulkRecord(image: file, answer: .detection(result)))
            return
        }
        let timing = Console.stageTimes(
            decode: result.decodingMilliseconds, preprocess: result.preprocessingMilliseconds,
            inference: result.inferenceMilliseconds)
        Console.print("\(file)  \(result.imageWidth)x\(result.imageHeight)  (\(timing))")
        if result.detections.isEmpty { Console.print("  (nothing above the threshold)") }
        for detection in result.detections {
            let box = detection.boundingBox
            let name =
                detection.categories.first.flatMap { $0.displayName ?? $0.label }
                ?? "class \(detection.categories.first?.index ?? 0)"
            let coordinates = [box.minX, box.minY, box.maxX, box.maxY].map { Console.format(Double($0), decimals: 1) }
            Console.print(
                "  \(Console.format(Double(detection.score), decimals: 3))  \(name)  "
                    + "box (\(coordinates[0]), \(coordinates[1])) - (\(coordinates[2]), \(coordinates[3]))")
        }
    }
}
