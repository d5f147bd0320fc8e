import Foundation
public import Testing

/// A page checked in a real browser: one of the repository's Selenium scripts
/// (`tools/…/*_check.py`), run by the test Python with Chromium and chromedriver, whose last
/// line on standard output is its report in JSON.
///
///     let report = try await BrowserPage.check("tools/serve/browser_check.py", [url, shots])
///     #expect(report["frames_while_paused"] as? Int == 0, "\(report)")
public enum BrowserPage {
    /// A script's report: its last line, and that line read as a JSON object.
    public struct Report: @unchecked Sendable, CustomStringConvertible {
        /// The report as read (nothing changes it once read).
        public let json: [String: Any]
        /// The line it was read from.
        public let line: String

        /// A value of the report.
        public subscript(key: String) -> Any? { json[key] }

        /// The line.
        public var description: String { line }
    }

    /// Requires what the checks run with, and says what installs what is missing.
    ///
    /// - Parameter sourceLocation: Where a missing piece is told.
    /// - Returns: The test Python's path.
    /// - Throws: Swift Testing's failed requirement when the test Python, Chromium or chromedriver
    ///   is missing.
    public static func python(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let python = Fixtures.path(".venv-test/bin/python")
        try #require(
            FileManager.default.isExecutableFile(atPath: python), "run scripts/setup-test-python.sh",
            sourceLocation: sourceLocation)
        try #require(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver"),
            "run scripts/install-test-packages.sh (make test does)", sourceLocation: sourceLocation)
        return python
    }

    /// Runs a check script, on a thread of its own (a blocked cooperative thread would starve a
    /// server running in this process), and expects it to exit 0.
    ///
    /// - Parameters:
    ///   - script: The script, from the repository's root.
    ///   - arguments: Its arguments (the page's address first, as the scripts take it).
    ///   - sourceLocation: Where a failure is told.
    /// - Returns: Its report.
    /// - Throws: A failed requirement when a piece is missing or the script printed no JSON
    ///   object last; what starting it throws.
    public static func check(
        _ script: String, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Report {
        let python = try python(sourceLocation: sourceLocation)
        let run = try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try ProcessResult.run(python, [Fixtures.path(script)] + arguments) })
            }
        }
        #expect(run.status == 0, "\(script): \(run.stderr.suffix(3000))", sourceLocation: sourceLocation)
        let line = try #require(
            run.stdout.split(separator: "\n").last.map(String.init), "\(script) printed nothing",
            sourceLocation: sourceLocation)
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(script): \(line)",
            sourceLocation: sourceLocation)
        return Report(json: json, line: line)
    }
}
