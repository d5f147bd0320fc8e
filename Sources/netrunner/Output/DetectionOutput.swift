import FoundationEssentials
import NetRunner

/// How `detect` prints a result: a block of text per image, or one JSON object per line.
enum DetectionOutput {
    struct Line: Encodable {
        var file: String
        var model: String
        var width: Int
        var height: Int
        var detections: [Detection]
        var decodingMilliseconds: Double
        var preprocessingMilliseconds: Double
        var inferenceMilliseconds: Double
        var postprocessingMilliseconds: Double
    }

    static func print(_ result: DetectionResult, file: String, model: String, json: Bool) throws {
        if json {
            try ClassificationOutput.printLine(
                Line(
                    file: file, model: model, width: result.imageWidth, height: result.imageHeight,
                    detections: result.detections, decodingMilliseconds: result.decodingMilliseconds,
                    preprocessingMilliseconds: result.preprocessingMilliseconds,
                    inferenceMilliseconds: result.inferenceMilliseconds,
                    postprocessingMilliseconds: result.postprocessingMilliseconds))
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
