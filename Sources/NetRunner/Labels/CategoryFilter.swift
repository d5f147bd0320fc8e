/// The Task Library's and MediaPipe's category allowlist and denylist, resolved once to
/// label indices.
///
/// A name matches a label when it equals the whole label line or its display name (the
/// first comma-separated synonym). Unknown names are ignored, as in the Task Library.
struct CategoryFilter: Sendable {
    private let allowed: Set<Int>?
    private let denied: Set<Int>

    /// Resolves the lists against the labels.
    ///
    /// - Throws: ``NetRunnerError/invalidOption(name:reason:)`` when both lists are given, or
    ///   when names are given without labels to match them against.
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
        func indices(_ names: [String]) -> Set<Int> {
            let wanted = Set(names)
            return Set(
                labels.labels.indices.filter {
                    wanted.contains(labels.labels[$0]) || labels.displayName($0).map(wanted.contains) == true
                })
        }
        allowed = allowlist.isEmpty ? nil : indices(allowlist)
        denied = indices(denylist)
    }

    /// Whether the label at `labelIndex` may be reported.
    func includes(_ labelIndex: Int) -> Bool {
        (allowed?.contains(labelIndex) ?? true) && !denied.contains(labelIndex)
    }
}
