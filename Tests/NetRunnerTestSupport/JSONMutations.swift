/// Corrupts JSON text the way fuzzing finds parser bugs: one to six edits, each replacing,
/// deleting or inserting a byte drawn from JSON's own punctuation and keywords, or cutting the
/// text short.
///
/// - Parameters:
///   - text: Valid JSON to start from.
///   - generator: The seeded generator, so a failure repeats.
/// - Returns: The corrupted bytes.
public func mutatedJSON(_ text: String, using generator: inout SeededGenerator) -> [UInt8] {
    let alphabet = Array("{}[]\",:0123456789-.eE truefalsenull\\/u\n".utf8)
    var bytes = Array(text.utf8)
    for _ in 0..<Int.random(in: 1...6, using: &generator) {
        guard !bytes.isEmpty else { break }
        let position = Int.random(in: 0..<bytes.count, using: &generator)
        switch Int.random(in: 0..<4, using: &generator) {
        case 0: bytes[position] = alphabet.randomElement(using: &generator) ?? 0
        case 1: bytes.remove(at: position)
        case 2: bytes.insert(alphabet.randomElement(using: &generator) ?? 0, at: position)
        default: bytes = Array(bytes.prefix(position))
        }
    }
    return bytes
}
