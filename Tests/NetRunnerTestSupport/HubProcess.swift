public import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `netrunner hub serve` on a free loopback port with an admin key, in a data folder; stopped
/// with SIGTERM (``stop()``) or killed (``kill()``), and restartable on the same folder.
public final class HubProcess: @unchecked Sendable {
    /// The admin key it was started with.
    public static let adminKey = "test-admin-key"
    private var process = Process()
    /// The data folder.
    public let data: String
    /// `http://127.0.0.1:PORT`.
    public private(set) var address = ""
    private let extra: [String]
    /// The hub's standard error (its log), beside the data folder: `DATA.log`.
    public var logPath: String { data + ".log" }

    /// Starts a hub.
    ///
    /// - Parameters:
    ///   - data: Its data folder.
    ///   - arguments: More arguments of `hub serve`.
    public init(data: String, arguments: [String] = []) throws {
        self.data = data
        self.extra = arguments
        try start()
    }

    /// Starts (again) on the same folder, on a new port.
    public func start() throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: Fixtures.netrunner)
        // A long idle timeout unless a test sets its own: in a parallel run the test process can
        // be starved for a minute between two chunks of an upload, which the request rate floor
        // would (rightly) cut.
        let idle = extra.contains("--idle-timeout") ? [] : ["--idle-timeout", "900"]
        process.arguments =
            ["hub", "serve", "--data", data, "--port", "0", "--admin-key", Self.adminKey] + idle + extra
        SpawnLog.record(Fixtures.netrunner, process.arguments ?? [])
        let output = Pipe()
        process.standardOutput = output
        if !FileManager.default.fileExists(atPath: logPath) {
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        log.seekToEndOfFile()
        process.standardError = log
        try process.run()
        var text = ""
        while !text.contains("\n") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let range = text.range(of: #"http://127\.0\.0\.1:\d+"#, options: .regularExpression) else {
            process.terminate()
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "hub printed: \(text)"])
        }
        address = String(text[range])
    }

    /// The last `count` bytes of the hub's log, for a failing test's message.
    public func logTail(_ count: Int = 4000) -> String {
        guard let data = FileManager.default.contents(atPath: logPath) else { return "(no log)" }
        return String(decoding: data.suffix(count), as: UTF8.self)
    }

    /// Runs `body`; an error it throws comes out with the hub's log appended, so a failure
    /// under load says what the hub saw.
    public func withLog<Value>(_ body: () async throws -> Value) async throws -> Value {
        do {
            return try await body()
        } catch {
            let state =
                process.isRunning
                ? "the hub is still running"
                : "the hub has exited: status \(process.terminationStatus), "
                    + (process.terminationReason == .uncaughtSignal ? "killed by a signal" : "exit")
            throw LoggedFailure(error: "\(error)", log: state + "\n" + logTail())
        }
    }

    /// An error with the hub's log.
    public struct LoggedFailure: Error, CustomStringConvertible {
        /// The error's text.
        public var error: String
        /// The end of the hub's log.
        public var log: String
        public var description: String { "\(error)\n--- hub log ---\n\(log)" }
    }

    /// SIGTERM, then the exit status; SIGKILL if the hub has not stopped within 15 s (a hub stuck on a request
    /// must fail its test, not hang the suite).
    @discardableResult
    public func stop() -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        process.terminate()
        let deadline = Date().addingTimeInterval(15)
        while process.isRunning, Date() < deadline { usleep(50_000) }
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// SIGKILL: no chance to clean up.
    public func kill() {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Starts an upload of `file` as a version of `name` declaring its whole length, sends half
    /// of it, kills the hub (SIGKILL) once it has read that half while the rest is awaited, then
    /// starts it again on the same folder.
    public func killMidUploadAndRestart(file: String, name: String) async throws {
        let size = try Data(contentsOf: URL(fileURLWithPath: file)).count
        let hubPort = Int(address.split(separator: ":").last ?? "") ?? 0
        // The client says its port once the half is sent, and holds the connection open.
        let client = try WatchedProcess(
            "/usr/bin/env",
            [
                "python3", "-c",
                """
                import socket, sys, time
                s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
                s.sendall(b"POST /v1/models/\(name)/versions HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nAuthorization: Bearer \(Self.adminKey)\\r\\nContent-Length: \(size)\\r\\n\\r\\n")
                s.sendall(open(sys.argv[2], "rb").read()[:\(size / 2)])
                print(s.getsockname()[1], flush=True)
                time.sleep(120)
                """,
                "\(hubPort)", file,
            ])
        defer {
            // SIGKILL: a child started from a test's thread may have SIGTERM blocked.
            Foundation.kill(client.process.processIdentifier, SIGKILL)
            client.process.waitUntilExit()
        }
        try await Eventually.wait(for: "the hub reading half an upload") {
            guard let clientPort = Int(client.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                guard client.process.isRunning else {
                    throw CocoaError(
                        .fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "upload client: \(client.stderr)"])
                }
                return false
            }
            return Loopback.hasRead(process.processIdentifier, port: hubPort, from: clientPort)
        }
        kill()
        try start()
    }

    /// A request to the hub: status, headers (lower-cased names), body.
    public func request(
        _ path: String, method: String = "GET", body: Data? = nil, headers: [String: String] = [:],
        key: String? = HubProcess.adminKey, timeout: TimeInterval = 60
    ) async throws -> (status: Int, headers: [String: String], body: Data) {
        guard let url = URL(string: address + path) else { throw URLError(.badURL) }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = method
        request.httpBody = body
        if let key { request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields { fields[String(describing: name).lowercased()] = "\(value)" }
        return (http.statusCode, fields, data)
    }
}
