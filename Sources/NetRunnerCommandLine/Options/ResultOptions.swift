import ArgumentParser
import NetRunner

/// Which answers `classify`, `detect` and `bulk` report, under the names of the library's
/// options, MediaPipe and the Task Library (`maxResults`, `scoreThreshold`,
/// `categoryAllowlist`, `categoryDenylist`), with the older short forms kept as aliases.
struct ResultOptions: ParsableArguments {
    @Option(
        name: [.customLong("max-results"), .customLong("top"), .customShort("k")], parsing: .unconditional,
        help: "The most answers per image (default: 5 labels for a classifier, every detection for a detector).")
    var maxResults: Int?

    @Option(
        name: [.customLong("score-threshold"), .customLong("threshold")], parsing: .unconditional,
        help: ArgumentHelp(
            "Leave out answers scoring below this, 0 to 1 (default: 0.5 for a detector; for a classifier the model's recommended threshold if its metadata has one, and never a label that would print as 0.0000). Net Runner's screen: --score-threshold 0.1."
        ))
    var scoreThreshold: Float?

    @Option(
        name: [.customLong("category-allowlist"), .customLong("allow")],
        help: "Only report this label (repeatable; the whole label line or its first name).")
    var categoryAllowlist: [String] = []

    @Option(
        name: [.customLong("category-denylist"), .customLong("deny")],
        help: "Never report this label (repeatable).")
    var categoryDenylist: [String] = []

    func validate() throws {
        if let maxResults { try OptionLimits.check(maxResults, "--max-results", in: 1...10_000) }
        if let scoreThreshold { try OptionLimits.check(Double(scoreThreshold), "--score-threshold", in: 0...1) }
        guard categoryAllowlist.isEmpty || categoryDenylist.isEmpty else {
            throw ValidationError("--category-allowlist and --category-denylist cannot be used together.")
        }
    }

    /// Sets a classifier's options from the flags.
    ///
    /// - Parameter options: The options to change.
    func apply(to options: inout ImageClassifier.Options) {
        options.maxResults = maxResults ?? 5
        options.scoreThreshold = scoreThreshold ?? 0
        options.categoryAllowlist = categoryAllowlist
        options.categoryDenylist = categoryDenylist
    }

    /// Sets a detector's options from the flags.
    ///
    /// - Parameter options: The options to change.
    func apply(to options: inout ObjectDetector.Options) {
        options.maxResults = maxResults
        options.scoreThreshold = scoreThreshold ?? 0.5
        options.categoryAllowlist = categoryAllowlist
        options.categoryDenylist = categoryDenylist
    }

    /// Sets the options of a task told from the model (`bulk`) from the flags.
    ///
    /// - Parameter options: The options to change.
    func apply(to options: inout ImageTask.Options) {
        options.maxResults = maxResults ?? 5
        options.maxDetections = maxResults
        options.classificationThreshold = scoreThreshold ?? 0
        options.detectionThreshold = scoreThreshold ?? 0.5
        options.categoryAllowlist = categoryAllowlist
        options.categoryDenylist = categoryDenylist
    }

    /// A classifier's answer as printed: without `--score-threshold`, labels that would print
    /// as 0.0000 are left out (``ImageAnswer/withoutUnprintableScores``).
    ///
    /// - Parameter result: The classifier's answer.
    /// - Returns: The answer to print.
    func worthPrinting(_ result: ClassificationResult) -> ClassificationResult {
        guard case .classification(let kept) = worthPrinting(.classification(result)) else { return result }
        return kept
    }

    /// ``worthPrinting(_:)`` for any task's answer.
    ///
    /// - Parameter answer: The answer.
    /// - Returns: The answer to print.
    func worthPrinting(_ answer: ImageAnswer) -> ImageAnswer {
        scoreThreshold == nil ? answer.withoutUnprintableScores : answer
    }
}
