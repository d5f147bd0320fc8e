import ArgumentParser

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The allowed range of every numeric flag, checked in each command's `validate()`: a value
/// out of range is a usage error naming the flag, the range and the value given, before
/// anything is loaded (so `nan`, `inf` or `1e19` seconds never reach a clock, and no thread
/// count can exhaust the machine's processes).
package enum OptionLimits {
    /// The most threads any command starts: 4 per online core, at most 256.
    static var maximumThreads: Int { min(256, 4 * coreCount) }

    /// The online cores.
    static var coreCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// The longest time limit accepted (`--max-seconds`, `--timeout`): one day.
    static let maximumSeconds: Double = 86_400

    /// Checks `--threads` or `--runtime-threads`.
    ///
    /// - Parameters:
    ///   - threads: The value given.
    ///   - flag: The flag's name.
    /// - Throws: `ValidationError` when it is not in 1...``maximumThreads``.
    package static func checkThreads(_ threads: Int, flag: String = "--threads") throws {
        guard (1...maximumThreads).contains(threads) else {
            throw ValidationError(
                "\(flag) must be between 1 and \(maximumThreads) (4 per core on \(coreCount) "
                    + "core\(coreCount == 1 ? "" : "s"), at most 256), not \(threads).")
        }
    }

    /// Checks an integer flag.
    ///
    /// - Parameters:
    ///   - value: The value given.
    ///   - flag: The flag, such as `--runs`.
    ///   - range: The values allowed.
    /// - Throws: `ValidationError` naming the flag and the range.
    package static func check(_ value: Int, _ flag: String, in range: ClosedRange<Int>) throws {
        guard range.contains(value) else {
            throw ValidationError(
                "\(flag) must be between \(range.lowerBound) and \(range.upperBound), not \(value).")
        }
    }

    /// Checks a number flag: finite and in `range`.
    ///
    /// - Parameters:
    ///   - value: The value given.
    ///   - flag: The flag, such as `--threshold`.
    ///   - range: The values allowed.
    /// - Throws: `ValidationError` naming the flag and the range.
    package static func check(_ value: Double, _ flag: String, in range: ClosedRange<Double>) throws {
        guard value.isFinite, range.contains(value) else {
            throw ValidationError(
                "\(flag) must be a number between \(range.lowerBound) and \(range.upperBound), not \(value).")
        }
    }

    /// Checks a number of seconds: finite, above 0 and at most ``maximumSeconds``.
    ///
    /// - Parameters:
    ///   - value: The value given.
    ///   - flag: The flag, such as `--timeout`.
    /// - Throws: `ValidationError` naming the flag and the range.
    package static func checkSeconds(_ value: Double, _ flag: String) throws {
        guard value.isFinite, value > 0, value <= maximumSeconds else {
            throw ValidationError(
                "\(flag) must be a number of seconds above 0 and at most \(Int(maximumSeconds)), not \(value).")
        }
    }
}
