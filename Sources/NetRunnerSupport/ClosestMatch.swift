/// The candidate most like `text`, for "did you mean" messages: the smallest edit distance
/// (Levenshtein, case-insensitive), ties to the earlier candidate; `nil` when none is within
/// half of the longer string's length (a guess that far off helps nobody).
///
/// - Parameters:
///   - text: What was given.
///   - candidates: What exists.
/// - Returns: The closest candidate, or `nil`.
package func closestMatch(to text: String, in candidates: some Sequence<String>) -> String? {
    let wanted = Array(text.lowercased().unicodeScalars)
    var best: (candidate: String, distance: Int)?
    for candidate in candidates {
        let other = Array(candidate.lowercased().unicodeScalars)
        let limit = max(wanted.count, other.count) / 2
        guard abs(wanted.count - other.count) <= min(limit, best?.distance ?? .max) else { continue }
        let distance = editDistance(wanted, other)
        if distance <= limit, distance < (best?.distance ?? .max) { best = (candidate, distance) }
    }
    return best?.candidate
}

/// Levenshtein distance between two scalar arrays, in O(n·m) time and O(m) memory.
private func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        for j in 1...b.count {
            let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
            current[j] = min(substitution, previous[j] + 1, current[j - 1] + 1)
        }
        swap(&previous, &current)
    }
    return previous[b.count]
}
