import Foundation

/// `tools/hub/file_server.py` on a free loopback port, serving a folder (with its fault paths:
/// `/huge`, `/short/NAME`, `/redirect/NAME`, `/slow/NAME`); stopped by ``stop()``.
///
///     let server = try FileServer(folder: folder.url.path)
///     defer { server.stop() }
///     let url = server.url("model.zip")
public final class FileServer: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe()
    /// The port it listens on.
    public let port: Int

    /// Starts the server.
    ///
    /// - Parameter folder: The folder it serves.
    /// - Throws: When python3 cannot start or prints no port.
    public init(folder: String) throws {
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Fixtures.path("tools/hub/file_server.py"), folder]
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
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "file server printed \(text)"])
        }
        self.port = port
    }

    /// The URL of a path on the server.
    ///
    /// - Parameter path: A path without the leading slash.
    /// - Returns: `http://127.0.0.1:PORT/path`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }

    /// Stops the server.
    public func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
