import NetRunnerSupport

/// The Task Library's and MediaPipe's category allowlist and denylist, resolved once to
/// label indices.
///
/// A name matches a label when it equals the whole label line or its display name (the
/// first comma-separated synonym). A name that matches no label is an error naming the closest
/// labels, those holding it as a word first, else the nearest spelling (the Task Library
/// ignores it, so a typo silently filters out everything, or nothing).
struct CategoryFilter: Sendable {
    private let allowed: Set<Int>?
    private let denied: Set<Int>

    /// Resolves the lists against the labels.
    ///
    /// - Throws: ``NetRunnerError/invalidOption(name:reason:)`` when both lists are given, or
    ///   when names are given without labels to match them against, or when a name matches no
    ///   label.
    init(allowlist: [String], denylist: [String], labels: LabelMap?) throws(NetRunnerError) {
        guard allowlist.isEmpty || denylist.isEmpty else {
            throw .invalidOption(
                name: "categoryAllowlist", reason: "an allowlist and a denylist cannot be used together")
        }
        guard !allowlist.isEmpty || !denylist.isEmpty else {
            (allowed, denied) = (nil, [])
            return
        }
        guard let labels else {
            throw .invalidOption(name: "categoryAllowlist", reason: "category names need a labels file")
        }
        func indices(_ names: [String], option: String) throws(NetRunnerError) -> Set<Int> {
            var found = Set<Int>()
            for name in names {
                let matching = labels.labels.indices.filter {
                    labels.labels[$0] == name || labels.displayName($0) == name
                }
                guard !matching.isEmpty else {
                    // Labels holding the name as a word first ("cat": "tiger cat"), else the
                    // nearest spelling; each suggested by the name the filter takes.
                    let candidates = labels.labels.indices.map {
                        (name: labels.displayName($0) ?? labels.labels[$0], text: labels.labels[$0])
                    }
                    let close = closestMatches(to: name, in: candidates, limit: 5)
                    let hint =
                        close.isEmpty ? "" : " (closest: " + close.map { "\"\($0)\"" }.joined(separator: ", ") + ")"
                    throw .invalidOption(
                        name: option,
                        reason: "\"\(name)\" is not one of the model's \(labels.labels.count) labels\(hint)")
                }
                found.formUnion(matching)
            }
            return found
        }
        allowed = allowlist.isEmpty ? nil : try indices(allowlist, option: "categoryAllowlist")
        denied = try indices(denylist, option: "categoryDenylist")
    }

    /// Whether the label at `labelIndex` may be reported.
    func includes(_ labelIndex: Int) -> Bool {
        (allowed?.contains(labelIndex) ?? true) && !denied.contains(labelIndex)
    }
}
