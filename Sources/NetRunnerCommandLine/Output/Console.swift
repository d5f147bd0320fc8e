import FoundationEssentials
import NetRunner
import NetRunnerSupport
import TensorFlowLite

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where the command-line tool writes: results to stdout, diagnostics to stderr.
///
/// Everything written for people goes through ``escaped(_:)``: file names, labels, model
/// descriptions and error messages come from files, and a control character in them (an
/// escape sequence, a carriage return, a line break) must not reach the terminal raw.
package enum Console {
    /// Writes one line of results to stdout, control characters escaped.
    package static func print(_ line: String) {
        Swift.print(escaped(line))
    }

    /// Sends what stdout holds to its reader now (a long-running command's status lines).
    package static func flush() {
        fflush(nil)  // every stream: stdout is a global the compiler cannot prove safe
    }

    /// Writes one line of diagnostics (or, without `newline`, part of one) to stderr, control
    /// characters escaped, never into a window in which the runtime's own output is being
    /// captured.
    package static func diagnostic(_ line: String, newline: Bool = true) {
        Runtime.writeToStandardError(escaped(line) + (newline ? "\n" : ""))
    }

    /// Writes terminal control text (the progress bar's own carriage returns and erasures)
    /// to stderr as it is; only for text made by the tool itself.
    package static func terminalControl(_ text: String) {
        Runtime.writeToStandardError(text)
    }

    /// `text` with every control character written as a JSON-style escape: C0 controls (line
    /// breaks and tabs included), DEL, C1 controls and the bidirectional overrides become
    /// `\n`, `\r`, `\t` or `\u001B`, `\u202E`..., so the text is one line that shows what
    /// it holds, and a JSON line stays valid JSON.
    ///
    /// - Parameter text: Text from anywhere (file names, labels, model descriptions).
    /// - Returns: The text, safe to write to a terminal.
    package static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            }
        }
        return result
    }

    /// Whether a character is escaped by ``escaped(_:)``.
    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F..<0xA0: true
        // Bidirectional embeddings, overrides and isolates, which reorder what is shown.
        case 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// Writes a value as pretty, key-sorted JSON to stdout, its keys in snake_case as every
    /// JSON output of the tool (the encoder escapes control characters in strings; the line
    /// breaks are its own; NaN and infinities as `null`).
    package static func printJSON(_ value: some Encodable) throws {
        let data = try JSONCoding.encoder(pretty: true, snakeCaseKeys: true).encode(value)
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) {
            print(String(line))
        }
    }

    /// A duration in seconds.
    package static func seconds(_ duration: Duration) -> Double {
        duration.inMilliseconds / 1000
    }

    /// A number of bytes as mebibytes with two decimals.
    package static func megabytes(_ bytes: Int) -> String {
        format(Double(bytes) / 1_048_576, decimals: 2)
    }

    /// A number with a fixed count of decimals.
    package static func format(_ value: Double, decimals: Int) -> String {
        fixedDecimals(value, decimals)
    }
}
