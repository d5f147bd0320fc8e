public import Foundation
public import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A `netrunner serve` process on a free loopback port, for one test: started, waited for
/// until ready, stopped with SIGTERM (`netrunnerTests`' process tests: start-up, exit codes,
/// signals; the rest run the server in process).
public final class ServerProcess: @unchecked Sendable {
    /// The server's process.
    public let process = Process()
    /// Where it listens: `http://127.0.0.1:PORT`.
    public let base: URL
    /// What it printed on stdout as it started (its start-up lines, printed and flushed at once).
    public let startLines: String
    private let output = Pipe()
    private let errors = Pipe()
    private let logged = ServerLog()

    /// What the server wrote to standard error so far (its log), the last 4 KB.
    public var log: String { logged.text }

    /// Starts the server and waits until `/v2/health/ready` answers 200.
    ///
    /// - Parameters:
    ///   - arguments: More arguments of `serve`.
    ///   - models: A models folder imports may write to (made if missing: serve refuses a
    ///     missing one); `nil`: the repository's bundles, imports off.
    ///   - environment: Variables set for the server besides this process's.
    /// - Throws: ``ServerFailure`` when it prints no address or is not ready within 60 s; what
    ///   starting the process throws.
    public init(_ arguments: [String] = [], models: String? = nil, environment: [String: String] = [:]) async throws {
        if let models { try FileManager.default.createDirectory(atPath: models, withIntermediateDirectories: true) }
        process.executableURL = URL(fileURLWithPath: Fixtures.netrunner)
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.arguments =
            ["serve", "--port", "0"]
            + (models.map { ["--models", $0] } ?? ["--models", Fixtures.path("Models/bundles"), "--no-import"])
            // A long idle timeout unless a test sets its own (a starved test process is not a slow client).
            + (arguments.contains("--idle-timeout") ? [] : ["--idle-timeout", "900"])
            + arguments
        SpawnLog.record(Fixtures.netrunner, process.arguments ?? [])
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Read the log as it comes, so a chatty server never blocks on a full pipe and a
        // failing test can show what the server said.
        _ = PipeReader(errors.fileHandleForReading) { [logged] in logged.append($0) }
        // The first line says where it listens: "netrunner serve: listening on http://127.0.0.1:PORT (...)".
        var text = ""
        let handle = output.fileHandleForReading
        while !text.contains("\n") {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let range = text.range(of: #"http://127\.0\.0\.1:\d+"#, options: .regularExpression) else {
            process.terminate()
            throw ServerFailure(message: "no address in: \(text)")
        }
        guard let address = URL(string: String(text[range])) else { throw ServerFailure(message: text) }
        base = address
        startLines = text
        for _ in 0..<600 {
            if let (_, response) = try? await URLSession.shared.data(
                from: base.appendingPathComponent("v2/health/ready")),
                (response as? HTTPURLResponse)?.statusCode == 200
            {
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        process.terminate()
        throw ServerFailure(message: "not ready within 60 s")
    }

    /// A server that did not start, or a request that could not be made.
    public struct ServerFailure: Error {
        /// What went wrong.
        public var message: String

        /// A failure saying `message`.
        public init(message: String) {
            self.message = message
        }
    }

    /// A request's status, headers and body.
    public struct Reply: Sendable {
        /// The status code.
        public var status: Int
        /// The header fields, their names in lower case.
        public var headers: [String: String]
        /// The body.
        public var body: Data
        /// The body as a JSON object; empty when it is none.
        public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }

        /// A reply.
        public init(status: Int, headers: [String: String], body: Data) {
            (self.status, self.headers, self.body) = (status, headers, body)
        }
    }

    /// Makes a request of the server.
    ///
    /// - Parameters:
    ///   - path: The path and query, from `/`.
    ///   - method: The method.
    ///   - body: The body, if any.
    ///   - contentType: Its `Content-Type`.
    ///   - headers: More header fields.
    /// - Returns: The reply.
    /// - Throws: ``ServerFailure`` for a bad path; URLSession's errors.
    public func request(
        _ path: String, method: String = "GET", body: Data? = nil, contentType: String? = nil,
        headers: [String: String] = [:]
    ) async throws -> Reply {
        guard let url = URL(string: base.absoluteString + path) else { throw ServerFailure(message: path) }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body
        if let contentType { request.setValue(contentType, forHTTPHeaderField: "Content-Type") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw ServerFailure(message: "\(response)") }
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields { fields[String(describing: name).lowercased()] = "\(value)" }
        return Reply(status: http.statusCode, headers: fields, body: data)
    }

    /// Sends SIGTERM and waits for the exit status.
    ///
    /// - Returns: The exit status.
    @discardableResult
    public func stop() -> Int32 {
        process.terminate()
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Stops the server and expects it to exit with 0, showing its log if it does not.
    ///
    /// - Parameters:
    ///   - comment: Said with a failure.
    ///   - sourceLocation: Where the failure is told.
    public func expectCleanStop(_ comment: String = "", sourceLocation: SourceLocation = #_sourceLocation) {
        let status = stop()
        #expect(status == 0, "\(comment) exit \(status); its log: \(log)", sourceLocation: sourceLocation)
    }
}

/// A server's standard error as it comes, the last 64 KB kept.
final class ServerLog: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()

    func append(_ chunk: Data) {
        lock.withLock {
            data.append(chunk)
            if data.count > 65536 { data.removeFirst(data.count - 65536) }
        }
    }

    /// The last 4 KB.
    var text: String { lock.withLock { String(decoding: data.suffix(4096), as: UTF8.self) } }
}
