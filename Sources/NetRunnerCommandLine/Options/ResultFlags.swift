import ArgumentParser
import NetRunner

/// Which answers `classify`, `detect`, `bulk` and `stream` report, under the names of the
/// library's ``ResultOptions``, MediaPipe and the Task Library (`maxResults`, `scoreThreshold`,
/// `categoryAllowlist`, `categoryDenylist`), with the older short forms kept as aliases: the one
/// place the flags become options.
struct ResultFlags: ParsableArguments {
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

    /// The flags as the library's options; each task applies them with its own defaults.
    var options: ResultOptions {
        ResultOptions(
            maxResults: maxResults, scoreThreshold: scoreThreshold, categoryAllowlist: categoryAllowlist,
            categoryDenylist: categoryDenylist)
    }
}
