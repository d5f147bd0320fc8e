/// The candidate most like `text`, for "did you mean" messages: the first candidate holding
/// `text` as a whole word or phrase (case-insensitive: "cat" finds "tiger cat"), else the
/// smallest edit distance (Levenshtein, case-insensitive), ties to the earlier candidate;
/// `nil` when none is within half of the longer string's length (a guess that far off helps
/// nobody).
///
/// - Parameters:
///   - text: What was given.
///   - candidates: What exists.
/// - Returns: The closest candidate, or `nil`.
package func closestMatch(to text: String, in candidates: some Sequence<String>) -> String? {
    closestMatches(to: text, in: candidates.map { (name: $0, text: $0) }, limit: 1).first
}

/// The candidates most like `text`, for "did you mean" messages: those whose text holds
/// `text` as a whole word or phrase (case-insensitive), in their order, at most `limit`; when
/// none does, the one with the smallest edit distance (``closestMatch(to:in:)``).
///
/// - Parameters:
///   - text: What was given.
///   - candidates: What exists: the name to suggest, and the text searched for the word (a
///     label's whole line with its synonyms, when the name is its first synonym).
///   - limit: The most names returned.
/// - Returns: The names, without repeats; empty when nothing is close.
package func closestMatches(to text: String, in candidates: [(name: String, text: String)], limit: Int) -> [String] {
    let wanted = Array(text.lowercased().unicodeScalars)
    var found: [String] = []
    if !wanted.isEmpty {
        for candidate in candidates where !found.contains(candidate.name) {
            guard found.count < limit else { break }
            if containsWholeWord(Array(candidate.text.lowercased().unicodeScalars), wanted) {
                found.append(candidate.name)
            }
        }
    }
    if !found.isEmpty { return found }
    var best: (candidate: String, distance: Int)?
    for candidate in candidates {
        let other = Array(candidate.name.lowercased().unicodeScalars)
        let limit = max(wanted.count, other.count) / 2
        guard abs(wanted.count - other.count) <= min(limit, best?.distance ?? .max) else { continue }
        let distance = editDistance(wanted, other)
        if distance <= limit, distance < (best?.distance ?? .max) { best = (candidate.name, distance) }
    }
    return best.map { [$0.candidate] } ?? []
}

/// Whether `word` occurs in `text` with no letter or digit just before or after it.
private func containsWholeWord(_ text: [Unicode.Scalar], _ word: [Unicode.Scalar]) -> Bool {
    guard word.count <= text.count else { return false }
    func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isAlphabetic || scalar.properties.numericType != nil
    }
    for start in 0...(text.count - word.count) where text[start..<(start + word.count)].elementsEqual(word) {
        let end = start + word.count
        if (start == 0 || !isWordScalar(text[start - 1])) && (end == text.count || !isWordScalar(text[end])) {
            return true
        }
    }
    return false
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
