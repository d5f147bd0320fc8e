package import FoundationEssentials

/// The one JSON encoder set-up of the package's outputs: keys sorted, slashes unescaped (the
/// `--json` lines, results files, the servers' replies, run descriptions, reports).
package enum JSONCoding {
    /// An encoder with the package's output formatting.
    ///
    /// - Parameter pretty: Whether to indent (files people read: reports, run descriptions).
    /// - Returns: The encoder.
    package static func encoder(pretty: Bool = false) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting =
            pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
