// Capture of what the runtime writes to stderr while NetRunner creates environments,
// models and compiled models.
//
// Invariants: captures never nest (a lock in CLiteRT serialises them); stderr is always restored
// before `capturing` returns. Every captured line that is not one of the runtime's `INFO:`
// lines is returned to the caller, which attaches it to an error or, with logging on, logs
// it. Known limit: a line another thread writes to stderr inside a capture window (the few
// milliseconds a model takes to load or compile) is taken for runtime output too.

internal import CLiteRT
import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

enum RuntimeLog {
    static let logger = Logger(label: "TensorFlowLite")

    /// Runs `body` with file descriptor 2 captured.
    ///
    /// - Parameters:
    ///   - verbose: Also keep the runtime's INFO lines (logging enabled).
    ///   - standardOutput: Capture file descriptor 1 too (dropping the runtime's INFO lines,
    ///     writing back anything else).
    ///   - body: The work during which stderr is captured.
    /// - Returns: what `body` returned or threw, and the captured text worth keeping.
    static func capturing<T>(
        verbose: Bool, standardOutput: Bool = false,
        _ body: () throws -> T
    ) -> (result: Result<T, any Error>, log: String) {
        let token = nr_stderr_capture_begin()
        let outToken = standardOutput ? nr_stdout_capture_begin() : -1
        let result = Result { try body() }
        if standardOutput { restoreStandardOutput(nr_stdout_capture_end(outToken), verbose: verbose) }
        var text = ""
        if let captured = nr_stderr_capture_end(token) {
            text = String(cString: captured)
            free(captured)
        }
        let kept = text.split(separator: "\n", omittingEmptySubsequences: true)
            .filter { verbose || !$0.hasPrefix("INFO: ") }
            .joined(separator: "\n")
        return (result, kept)
    }

    /// Calls a LiteRT function that makes a handle, with the runtime's output captured (and
    /// logged when `verbose`).
    ///
    /// - Parameters:
    ///   - function: The function's name, for its error.
    ///   - verbose: Keep the runtime's INFO lines too, and log what is kept.
    ///   - standardOutput: Capture file descriptor 1 too.
    ///   - call: The call, which sets the handle.
    /// - Returns: The handle.
    /// - Throws: ``LiteRTCallError`` with what the runtime wrote, for a failed call or one that
    ///   made no handle.
    static func created<Handle>(
        by function: String, verbose: Bool, standardOutput: Bool = false,
        _ call: (inout Handle?) -> NRLiteRtStatus
    ) throws -> Handle {
        var handle: Handle?
        let (result, log) = capturing(verbose: verbose, standardOutput: standardOutput) {
            try check(call(&handle), function)
        }
        if verbose { forward(log) }
        if case .failure(var error as LiteRTCallError) = result {
            error.runtimeLog = log
            throw error
        }
        guard let handle else { throw LiteRTCallError(function: function, status: .runtimeFailure, runtimeLog: log) }
        return handle
    }

    /// Writes what was captured from stdout back to it, less the runtime's own `INFO:` lines
    /// (unless `verbose`, when they go to the logger): anything else another thread printed
    /// meanwhile is kept.
    private static func restoreStandardOutput(_ captured: UnsafeMutablePointer<CChar>?, verbose: Bool) {
        guard let captured else { return }
        let text = String(cString: captured)
        free(captured)
        var kept = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast(text.hasSuffix("\n") ? 1 : 0)
        {
            if line.hasPrefix("INFO: ") {
                if verbose { logger.info("\(line.dropFirst(6))") }
            } else {
                kept += line + "\n"
            }
        }
        if !text.hasSuffix("\n"), !kept.isEmpty { kept.removeLast() }
        guard !kept.isEmpty else { return }
        kept.withUTF8 { bytes in
            if let base = bytes.baseAddress { nr_stdout_write(base, bytes.count) }
        }
    }

    /// Writes text to stderr under the capture lock, outside any capture window.
    static func writeToStandardError(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return }
            nr_stderr_write(base, bytes.count)
        }
    }

    /// The severity letter of a glog line (`I0000 00:00:...`), or `nil` for another line.
    private static func glogSeverity(_ line: Substring) -> Character? {
        guard let first = line.first, "IWEF".contains(first) else { return nil }
        let digits = line.dropFirst().prefix(4)
        guard digits.count == 4, digits.allSatisfy(\.isNumber), line.dropFirst(5).first == " " else { return nil }
        return first
    }

    /// Sends captured runtime text to the `TensorFlowLite` logger, line by line.
    static func forward(_ text: String) {
        for line in text.split(separator: "\n") {
            if line.hasPrefix("INFO: ") {
                logger.info("\(line.dropFirst(6))")
            } else if line.hasPrefix("WARNING: ") {
                logger.warning("\(line.dropFirst(9))")
            } else if let severity = glogSeverity(line) {
                // The GPU accelerator's own lines (glog: "I0000 00:00:... file.cc:123] text").
                switch severity {
                case "I": logger.info("\(line)")
                case "W": logger.warning("\(line)")
                default: logger.error("\(line)")
                }
            } else if line.hasPrefix("Warning: ") {
                logger.warning("\(line.dropFirst(9))")
            } else {
                logger.error("\(line)")
            }
        }
    }
}
