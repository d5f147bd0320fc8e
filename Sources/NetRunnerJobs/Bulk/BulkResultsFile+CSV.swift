import FoundationEssentials
package import NetRunner
import NetRunnerSupport

/// The CSV results format: each record's fields, quoted as RFC 4180 says and protected from
/// spreadsheets' formulas, and a line's first field read back byte for byte.
extension BulkResultsFile {
    static func csvFields(_ record: ResultsLine) -> [String] {
        let (answer, score, results) = record.answer?.csvFields ?? ("", "", "")
        let milliseconds = { (value: Double?) in value.map { String(($0 * 1000).rounded() / 1000) } ?? "" }
        return [
            record.image, answer, score, results, milliseconds(record.answer?.decodingMilliseconds),
            milliseconds(record.answer?.preprocessingMilliseconds), milliseconds(record.answer?.inferenceMilliseconds),
            milliseconds(record.totalMilliseconds), record.error ?? "",
        ]
    }

    /// A field quoted as RFC 4180 says: a field with a comma, a quote or a line break is
    /// quoted, its quotes doubled, so every name round-trips byte for byte (a reader that
    /// follows the RFC, as Python's csv and pandas do, reads the line break back).
    ///
    /// A field that a spreadsheet would run as a formula (it starts with `=`, `+`, `-`, `@`, a
    /// tab or a carriage return: OWASP's "CSV injection") gets a `'` in front, as OWASP
    /// advises, and so does a field that starts with `'`, so that ``firstCSVField(_:)`` takes
    /// exactly one `'` off and a name still comes back byte for byte.
    static func csvQuoted(_ field: String) -> String {
        var field = field
        if let first = field.unicodeScalars.first, formulaStarts.contains(first) { field = "'" + field }
        guard field.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else {
            return field
        }
        return "\"" + field.replacing("\"", with: "\"\"") + "\""
    }

    /// The first field of a CSV line, unquoted.
    static func firstCSVField(_ line: String) -> String? {
        // Scalars, not characters: "\r\n" or a quote followed by a combining mark is one
        // character, and a name must come back scalar for scalar.
        let scalars = line.unicodeScalars
        guard scalars.first == "\"" else { return unprotected(String.UnicodeScalarView(scalars.prefix { $0 != "," })) }
        var field = String.UnicodeScalarView()
        var index = scalars.index(after: scalars.startIndex)
        while index < scalars.endIndex {
            let scalar = scalars[index]
            index = scalars.index(after: index)
            if scalar == "\"" {
                guard index < scalars.endIndex, scalars[index] == "\"" else { return unprotected(field) }
                index = scalars.index(after: index)
            }
            field.append(scalar)
        }
        return nil
    }

    /// The first scalars of a field a spreadsheet would run as a formula, and the `'` that
    /// protects them (see ``csvQuoted(_:)``).
    static let formulaStarts: Set<Unicode.Scalar> = ["=", "+", "-", "@", "\t", "\r", "'"]

    /// A field as written, its protecting `'` taken off.
    static func unprotected(_ field: some Sequence<Unicode.Scalar>) -> String {
        var scalars = String.UnicodeScalarView(field)
        if scalars.first == "'" { scalars.removeFirst() }
        return String(scalars)
    }
}

extension BulkResultsFile.Format {
    /// The line a record is written as in this format, newline included.
    ///
    /// - Parameter record: The record.
    /// - Returns: The line.
    package func line(for record: ResultsLine) -> String {
        switch self {
        case .jsonLines:
            let encoder = JSONCoding.encoder()
            // Encoding these plain values cannot fail; an empty object would still be a line.
            let data = (try? encoder.encode(record)) ?? Data("{}".utf8)
            return String(decoding: data, as: UTF8.self) + "\n"
        case .csv:
            return BulkResultsFile.csvFields(record).map(BulkResultsFile.csvQuoted).joined(separator: ",") + "\n"
        }
    }
}
