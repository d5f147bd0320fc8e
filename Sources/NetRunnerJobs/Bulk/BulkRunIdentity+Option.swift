extension BulkRunIdentity {
    /// An option that changes answers, as a run's description keys it.
    ///
    /// The key is the flag that sets it (`--shard`), so files written by any version read alike
    /// and a difference is named as a person typed it. Code names the option; only this table
    /// spells it.
    package enum Option: String, CaseIterable, Sendable {
        /// The shard of the run (`I/N`).
        case shard = "--shard"
        /// The most results kept per image.
        case maxResults = "--max-results"
        /// The lowest score kept.
        case scoreThreshold = "--score-threshold"
        /// The only labels reported (unit-separated).
        case categoryAllowlist = "--category-allowlist"
        /// Labels never reported (unit-separated).
        case categoryDenylist = "--category-denylist"
        /// JPEGs decoded at a DCT scale (`on`).
        case fastDecoding = "--fast-decoding"
        /// The SHA-256 of a labels file replacing the model's.
        case labels = "--labels"
        /// The task the model ran as, when `--task` chose it (its kind).
        case task = "--task"
    }

    /// Creates an identity from typed options.
    ///
    /// - Parameters:
    ///   - modelSHA256: The model's SHA-256.
    ///   - model: The model's name.
    ///   - options: The options that change answers, each as canonical text.
    ///   - roots: The paths given, as typed.
    package init(modelSHA256: String, model: String, options: [Option: String], roots: [String]) {
        self.init(
            modelSHA256: modelSHA256, model: model,
            options: Dictionary(uniqueKeysWithValues: options.map { ($0.key.rawValue, $0.value) }), roots: roots)
    }

    /// An option's canonical text, or `nil` when it was not given.
    package subscript(option: Option) -> String? {
        get { options[option.rawValue] }
        set { options[option.rawValue] = newValue }
    }
}
