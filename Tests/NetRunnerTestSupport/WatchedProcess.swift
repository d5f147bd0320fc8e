public import Foundation

/// A child process whose standard output and error are read as they come, so that a test can
/// wait for what it says (with ``Eventually``) while it runs.
public final class WatchedProcess: @unchecked Sendable {
    /// The process.
    public let process = Process()
    private let lock = NSLock()
    private var out = Data()
    private var err = Data()
    private var ended = 0
    private let outputs = (out: Pipe(), err: Pipe())

    /// Starts `executable` with `arguments`.
    public init(_ executable: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        SpawnLog.record(executable, arguments)
        process.standardOutput = outputs.out
        process.standardError = outputs.err
        try process.run()
        // One reader per pipe, blocking until the pipe's end (on Linux a readability handler was
        // not called at the end).
        for (handle, isOutput) in [(outputs.out.fileHandleForReading, true), (outputs.err.fileHandleForReading, false)]
        {
            Thread.detachNewThread { [self] in
                while true {
                    let chunk = handle.availableData
                    lock.withLock {
                        if chunk.isEmpty {
                            ended += 1
                        } else if isOutput {
                            out.append(chunk)
                        } else {
                            err.append(chunk)
                        }
                    }
                    if chunk.isEmpty { return }
                }
            }
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
        try Eventually.waitBlocking(for: "the end of its output", upTo: .seconds(10)) { lock.withLock { ended == 2 } }
        return ProcessResult(status: process.terminationStatus, stdout: stdout, stderr: stderr)
    }
}
