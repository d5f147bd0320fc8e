package import FoundationEssentials

/// The one JSON encoder set-up of the package's outputs: keys sorted, slashes unescaped (the
/// `--json` lines, results files, the servers' replies, run descriptions, reports).
///
/// A number that is not finite (a model answering NaN or infinity) has no JSON form; it is
/// written as `null`, so that an answer with one is still an answer (Foundation's encoder
/// would refuse the whole value, and a server would answer 500).
package enum JSONCoding {
    /// An encoder with the package's output formatting.
    package struct Encoder: Sendable {
        let pretty: Bool
        let snakeCaseKeys: Bool

        /// Encodes a value; NaN and infinities as `null`.
        ///
        /// - Parameter value: The value.
        /// - Returns: Its JSON.
        /// - Throws: `EncodingError` from Foundation's encoder.
        package func encode(_ value: some Encodable) throws -> Data {
            let encoder = JSONEncoder()
            encoder.outputFormatting =
                pretty
                ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
            if snakeCaseKeys { encoder.keyEncodingStrategy = .convertToSnakeCase }
            encoder.nonConformingFloatEncodingStrategy = .convertToString(
                positiveInfinity: JSONCoding.nonFinite, negativeInfinity: JSONCoding.nonFinite,
                nan: JSONCoding.nonFinite)
            return JSONCoding.nullingNonFinite(try encoder.encode(value))
        }
    }

    /// What a non-finite number is encoded as before it becomes `null`: a string no answer holds
    /// (it begins and ends with U+0001, which the encoder writes as `\u0001`).
    static let nonFinite = "\u{1}netrunner:non-finite\u{1}"

    /// An encoder with the package's output formatting.
    ///
    /// - Parameters:
    ///   - pretty: Whether to indent (files people read: reports, run descriptions).
    ///   - snakeCaseKeys: Whether keys are written in snake_case (the command line's `--json`).
    /// - Returns: The encoder.
    package static func encoder(pretty: Bool = false, snakeCaseKeys: Bool = false) -> Encoder {
        Encoder(pretty: pretty, snakeCaseKeys: snakeCaseKeys)
    }

    /// `data` with every encoded ``nonFinite`` string replaced by `null`.
    static func nullingNonFinite(_ data: Data) -> Data {
        let marker = Array("\"\\u0001netrunner:non-finite\\u0001\"".utf8)
        let bytes = [UInt8](data)
        func marks(_ index: Int) -> Bool {
            index + marker.count <= bytes.count && bytes[index..<index + marker.count].elementsEqual(marker)
        }
        guard var index = bytes.indices.first(where: marks) else { return data }
        var out = Array(bytes[..<index])
        while index < bytes.count {
            if marks(index) {
                out.append(contentsOf: "null".utf8)
                index += marker.count
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return Data(out)
    }
}
