/// The user names and passwords of URLs, kept out of messages, logs and listings.
///
///     URLCredentials.masked("rtsp://admin:hunter2@10.0.0.5/live: Connection refused")
///     // "rtsp://***@10.0.0.5/live: Connection refused"
///
/// Every URL in the text (`scheme://`, anywhere, as ffmpeg quotes them in its messages) loses
/// its user information: the part of its authority before the last `@`. A password written with
/// a `/`, `?` or `#` in it (not percent-encoded) is caught too: when an `@` follows in the same
/// word and a `:` stands between `://` and it, everything up to that `@` is masked (a path with
/// an `@` after a port is then masked more than needed, never less).
package enum URLCredentials {
    /// The text with the user information of every URL in it replaced by `***`.
    ///
    /// - Parameter text: A URL, a message or a log line.
    /// - Returns: The text, masked; the same text when it holds no URL with user information.
    package static func masked(_ text: String) -> String {
        guard text.contains("@"), text.contains("://") else { return text }
        var result = ""
        var rest = Substring(text)
        while let marker = rest.firstRange(of: "://") {
            result += rest[..<marker.upperBound]
            let after = rest[marker.upperBound...]
            // The URL's word: up to white space or a character that cannot stand in a URL.
            let word = after.prefix { !$0.isWhitespace && !"\"'<>`".contains($0) }
            let authority = word.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            var cut: Substring.Index?
            if let at = authority.lastIndex(of: "@") {
                cut = at
            } else if let at = word.lastIndex(of: "@"), word[..<at].contains(":") {
                cut = at
            }
            if let cut {
                result += "***"
                rest = after[cut...]
            } else {
                rest = after
            }
        }
        result += rest
        return result
    }
}
