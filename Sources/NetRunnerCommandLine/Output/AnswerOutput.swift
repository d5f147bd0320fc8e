import FoundationEssentials
import NetRunner
import NetRunnerSupport

/// How `classify`, `detect` and every other task's command print an answer: a block of text per
/// image, as its task writes it (``VisionTaskDefinition/textLines(_:image:)``), or one JSON line
/// per image in the shape of a `bulk` results line (docs/cli.md#one-json-line-per-image---json).
enum AnswerOutput {
    static func print(_ answer: ImageAnswer, file: String, json: Bool) throws {
        if json {
            try printLine(ResultsLine(image: file, answer: answer))
            return
        }
        for line in answer.textLines(image: file) { Console.print(line) }
    }

    /// Prints why an image failed: on stderr, or as a results line (`"error": true`).
    static func printError(_ error: any Error, file: String, json: Bool) {
        if json {
            try? printLine(ResultsLine(image: file, error: "\(error)"))
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
