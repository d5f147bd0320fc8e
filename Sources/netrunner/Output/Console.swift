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
enum Console {
    /// Writes one line of results to stdout.
    static func print(_ line: String) {
        Swift.print(line)
    }

    /// Writes one line of diagnostics (or, without `newline`, part of one) to stderr, never
    /// into a window in which the runtime's own output is being captured.
    static func diagnostic(_ line: String, newline: Bool = true) {
        Runtime.writeToStandardError(newline ? line + "\n" : line)
    }

    /// Writes a value as pretty, key-sorted JSON to stdout.
    static func printJSON(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(value)
        print(String(decoding: data, as: UTF8.self))
    }

    /// A duration in seconds.
    static func seconds(_ duration: Duration) -> Double {
        duration.inMilliseconds / 1000
    }

    /// A number of bytes as mebibytes with two decimals.
    static func megabytes(_ bytes: Int) -> String {
        format(Double(bytes) / 1_048_576, decimals: 2)
    }

    /// The time of each stage of one image, as the per-image lines show it.
    static func stageTimes(decode: Double, preprocess: Double, inference: Double) -> String {
        "decode \(format(decode, decimals: 1)) ms, preprocess \(format(preprocess, decimals: 1)) ms, "
            + "inference \(format(inference, decimals: 1)) ms"
    }

    /// A number with a fixed count of decimals.
    static func format(_ value: Double, decimals: Int) -> String {
        fixedDecimals(value, decimals)
    }
}
