import FoundationEssentials
import NetRunner
import NetRunnerSupport

/// How `classify` prints a result: a block of text per image, or one JSON line per image in
/// the shape of a `bulk` results line (docs/json.md).
enum ClassificationOutput {
    static func print(_ result: ClassificationResult, file: String, json: Bool) throws {
        if json {
            try printLine(BulkRecord(image: file, answer: .classification(result)))
            return
        }
        let timing = Console.stageTimes(
            decode: result.decodingMilliseconds, preprocess: result.preprocessingMilliseconds,
            inference: result.inferenceMilliseconds)
        // A batched image's inference is its share: the batch's own time said beside it.
        let batch = result.batch.map {
            "; inference a share of a batch of \($0.size) run in \(Console.format($0.inferenceMilliseconds, decimals: 1)) ms"
        }
        Console.print("\(file)  (\(timing)\(batch ?? ""))")
        if result.categories.isEmpty { Console.print("  (no label above the threshold)") }
        for category in result.categories {
            let name = category.displayName ?? category.label ?? "class \(category.index)"
            let score = Console.format(Double(category.score), decimals: 4)
            Console.print("  \(score)  \(name)  [\(category.index)]")
        }
    }

    /// Prints why an image failed: on stderr, or as a results line (`"error": true`).
    static func printError(_ error: any Error, file: String, json: Bool) {
        if json {
            try? printLine(BulkRecord(image: file, error: "\(error)"))
        } else {
            Console.diagnostic("\(file): \(error)")
        }
    }

    /// Prints one JSON line, keys sorted, as results files hold them.
    static func printLine(_ value: some Encodable) throws {
        let encoder = JSONCoding.encoder()
        Console.print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }
}
