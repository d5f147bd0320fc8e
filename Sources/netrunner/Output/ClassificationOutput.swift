import FoundationEssentials
import NetRunner

/// How `classify` prints a result: a block of text per image, or one JSON object per line.
enum ClassificationOutput {
    struct Line: Encodable {
        var file: String
        var model: String
        var categories: [Category]
        var decodingMilliseconds: Double
        var preprocessingMilliseconds: Double
        var inferenceMilliseconds: Double
    }

    struct ErrorLine: Encodable {
        var file: String
        var error: String
    }

    static func print(_ result: ClassificationResult, file: String, model: String, json: Bool) throws {
        if json {
            try printLine(
                Line(
                    file: file, model: model, categories: result.categories,
                    decodingMilliseconds: result.decodingMilliseconds,
                    preprocessingMilliseconds: result.preprocessingMilliseconds,
                    inferenceMilliseconds: result.inferenceMilliseconds))
            return
        }
        let timing = Console.stageTimes(
            decode: result.decodingMilliseconds, preprocess: result.preprocessingMilliseconds,
            inference: result.inferenceMilliseconds)
        Console.print("\(file)  (\(timing))")
        if result.categories.isEmpty { Console.print("  (no label above the threshold)") }
        for category in result.categories {
            let name = category.displayName ?? category.label ?? "class \(category.index)"
            let score = Console.format(Double(category.score), decimals: 4)
            Console.print("  \(score)  \(name)  [\(category.index)]")
        }
    }

    static func printError(_ error: any Error, file: String, json: Bool) {
        if json {
            try? printLine(ErrorLine(file: file, error: "\(error)"))
        } else {
            Console.diagnostic("\(file): \(error)")
        }
    }

    static func printLine(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        Console.print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }
}
