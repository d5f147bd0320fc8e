/// What an evaluation's message may say to whoever reads it.
///
/// Anyone reads it, on a hub open to anonymous readers. Its own file paths are no business of theirs (issue 53: a failed evaluation's log
/// tail showed the data folder, the test bundles' folder and the evaluator), so they are cut to
/// what a reader needs: the file's name.
enum GateMessages {
    /// `text` with the hub's folders named by role and every other absolute path cut to its last
    /// part: `/var/lib/netrunner-hub/data/evaluations/m/2/production/models/candidate-v2.tflite`
    /// becomes `candidate-v2.tflite`.
    ///
    /// - Parameters:
    ///   - text: The message.
    ///   - folders: Known prefixes and what to write instead (the longest first is best).
    /// - Returns: The message without the hub's paths.
    static func scrubbed(_ text: String, folders: [(path: String, shown: String)] = []) -> String {
        var text = text
        for (path, shown) in folders where path.count > 1 {
            text = text.replacing(path, with: shown)
        }
        var result = ""
        var token = ""
        func flush() {
            result += shortened(token)
            token = ""
        }
        for character in text {
            if character.isWhitespace || "\"'`(),;=[]<>".contains(character) {
                flush()
                result.append(character)
            } else {
                token.append(character)
            }
        }
        flush()
        return result
    }

    /// An absolute path (`/a/b/c`, two or more parts) as its last part; anything else as it is.
    static func shortened(_ token: String) -> String {
        guard token.hasPrefix("/"), token.dropFirst().contains("/") else { return token }
        var trimmed = Substring(token)
        // A trailing colon or full stop is the sentence's, not the path's.
        var tail = ""
        while let last = trimmed.last, ":.".contains(last) {
            tail = String(last) + tail
            trimmed = trimmed.dropLast()
        }
        let parts = trimmed.split(separator: "/")
        return (parts.last.map(String.init) ?? "") + tail
    }
}
