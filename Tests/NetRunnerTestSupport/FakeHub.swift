import Foundation

/// `tools/hub/fake_hub.py` on a free loopback port: a hub that answers what the test scripts
/// (hostile digests, lying sizes, foreign download URLs) and records every request it gets,
/// with its `Authorization` header; stopped by ``stop()``.
///
///     let hub = try FakeHub(folder: folder.path("fake"))
///     defer { hub.stop() }
///     try hub.script(["/v1/models/m/resolve": ["json": [...]], "/blob": ["bytes": 1000]])
public final class FakeHub: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe()
    private let scriptPath: String
    private let logPath: String
    /// The port it listens on.
    public let port: Int

    /// One request the fake hub received.
    public struct Received: Sendable, Equatable {
        /// `GET`, `HEAD`...
        public var method: String
        /// The path with its query.
        public var path: String
        /// The `Authorization` header, if any.
        public var authorization: String?

        /// A request as received.
        public init(method: String, path: String, authorization: String?) {
            self.method = method
            self.path = path
            self.authorization = authorization
        }
    }

    /// Starts a fake hub answering 404 to everything until ``script(_:)``.
    ///
    /// - Parameter folder: A folder for its script and log (made if missing).
    public init(folder: String) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        scriptPath = folder + "/script.json"
        logPath = folder + "/log.jsonl"
        try Data(#"{"routes": {}}"#.utf8).write(to: URL(fileURLWithPath: scriptPath))
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Fixtures.path("tools/hub/fake_hub.py"), scriptPath, logPath]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var text = ""
        while !text.contains("\n") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "fake hub printed \(text)"])
        }
        self.port = port
    }

    /// `http://127.0.0.1:PORT`.
    public var address: String { "http://127.0.0.1:\(port)" }

    /// Sets the answers, path by path (see `tools/hub/fake_hub.py`), and forgets the requests so far.
    public func script(_ routes: [String: [String: Any]]) throws {
        let data = try JSONSerialization.data(withJSONObject: ["routes": routes])
        try data.write(to: URL(fileURLWithPath: scriptPath), options: .atomic)
        try Data().write(to: URL(fileURLWithPath: logPath))
    }

    /// The requests received since the last ``script(_:)``.
    public func received() -> [Received] {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                return nil
            }
            return Received(
                method: object["method"] as? String ?? "", path: object["path"] as? String ?? "",
                authorization: object["authorization"] as? String)
        }
    }

    /// Stops the server.
    public func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
