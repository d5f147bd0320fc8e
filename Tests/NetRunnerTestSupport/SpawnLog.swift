import Foundation
public import Testing

/// Which tests start a server as a child process (issue 34: at most a handful should), counted
/// on request: with `NETRUNNER_SPAWN_LOG=/path` set, every launch of `netrunner serve` or
/// `netrunner hub serve` made by the test helpers (``HubProcess``, ``ProcessResult/run(_:_:environment:workingDirectory:)``,
/// ``WatchedProcess``, ``ServerProcess``, `netrunnerTests`' `Child`ren) appends one line
///
///     <test function> <suite> <argv[0..2]>
///
/// to the file. Unset (the default), it costs one environment look-up per launch.
///
///     NETRUNNER_SPAWN_LOG=/tmp/spawns swift test --skip-build --filter netrunnerTests
///     cut -d' ' -f1,2 /tmp/spawns | sort -u | wc -l    # spawning test functions
public enum SpawnLog {
    /// The environment variable naming the log file.
    public static let variable = "NETRUNNER_SPAWN_LOG"

    /// Records a launch of `executable` with `arguments` if it starts a server and the log is on.
    ///
    /// - Parameters:
    ///   - executable: The program launched (`netrunner`, or a wrapper such as `timeout`).
    ///   - arguments: Its arguments.
    ///   - test: The test launching it (Swift Testing's current test by default).
    public static func record(_ executable: String, _ arguments: [String], test: Test? = Test.current) {
        guard let path = ProcessInfo.processInfo.environment[variable], !path.isEmpty else { return }
        let argv = [executable] + arguments
        // The server command follows the netrunner executable, wherever a wrapper put it.
        guard let at = argv.firstIndex(where: { $0.hasSuffix("/netrunner") || $0 == "netrunner" }) else { return }
        let command = Array(argv[(at + 1)...].prefix(2))
        guard command.first == "serve" || command == ["hub", "serve"] else { return }
        let name = test?.name.replacing(" ", with: "_") ?? "(no-test)"
        let suite = test.map { $0.id.nameComponents.dropLast().joined(separator: ".") } ?? "-"
        let shown = ([(argv[at] as NSString).lastPathComponent] + command).joined(separator: " ")
        let line = Data("\(name) \(test?.id.moduleName ?? "-").\(suite) \(shown)\n".utf8)
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        // One write of a short line with O_APPEND: parallel tests' lines do not interleave.
        _ = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }
}
