public import Foundation

/// A child process whose standard output and error are read as they come, so that a test can
/// wait for what it says (with ``Eventually``) while it runs.
public final class WatchedProcess: @unchecked Sendable {
    /// The process.
    public let process = Process()
    private let lock = NSLock()
    private var out = Data()
    private var err = Data()
    private var readers: [PipeReader] = []
    private let outputs = (out: Pipe(), err: Pipe())

    /// Starts `executable` with `arguments`.
    public init(_ executable: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        SpawnLog.record(executable, arguments)
        process.standardOutput = outputs.out
        process.standardError = outputs.err
        try process.run()
        // One reader per pipe, blocking until the pipe's end.
        for isOutput in [true, false] {
            let handle = (isOutput ? outputs.out : outputs.err).fileHandleForReading
            readers.append(
                PipeReader(handle) { [self] chunk in
                    lock.withLock { isOutput ? out.append(chunk) : err.append(chunk) }
                })
        }
    }

    /// Its standard output so far.
    public var stdout: String { lock.withLock { String(decoding: out, as: UTF8.self) } }

    /// Its standard error so far.
    public var stderr: String { lock.withLock { String(decoding: err, as: UTF8.self) } }

    /// The lines of standard output so far.
    public var stdoutLines: Int { lock.withLock { out.count { $0 == UInt8(ascii: "\n") } } }

    /// Waits for the exit and for the last of its output.
    ///
    /// - Parameter limit: How long it may still run; after that it is killed.
    /// - Returns: The exit status, with everything it wrote.
    /// - Throws: ``Eventually/Timeout`` when it had to be killed.
    public func finish(upTo limit: Duration = .seconds(60)) throws -> ProcessResult {
        do {
            try Eventually.waitBlocking(
                for: "\(process.executableURL?.lastPathComponent ?? "the process") to exit", upTo: limit
            ) {
                !process.isRunning
            }
        } catch {
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw error
        }
        process.waitUntilExit()
        // The last of its output: both pipes read to their end.
        for reader in readers where !reader.waitForEnd(upTo: .seconds(10)) {
            throw Eventually.Timeout(description: "the end of its output within 10 s")
        }
        return ProcessResult(status: process.terminationStatus, stdout: stdout, stderr: stderr)
    }
}
