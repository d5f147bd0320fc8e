import ArgumentParser
import FoundationEssentials
import Subprocess

#if canImport(System)
    import System
#else
    import SystemPackage
#endif

/// `--model hub:NAME[@VERSION|@ALIAS]`, the hub's model.
///
/// Downloaded once (verified, cached), then read from the cache; when the hub cannot be
/// reached, the verified copy is used. The hub client lives in `netrunner-net` (`hub-path`), so
/// `netrunner` builds without it.
enum HubReference {
    /// Whether `--model` names a hub's model (`hub:NAME[@REF]`).
    ///
    /// - Parameter text: What `--model` says.
    /// - Returns: Whether it starts with `hub:` and names something.
    static func isHubModel(_ text: String) -> Bool {
        text.hasPrefix("hub:") && text.count > 4
    }

    /// The local path of a `hub:` model, or the text itself for any other model.
    ///
    /// - Parameters:
    ///   - text: What `--model` says.
    ///   - hub: `--hub`, else `NETRUNNER_HUB`.
    ///   - token: `--token`, else `NETRUNNER_HUB_TOKEN`.
    /// - Returns: A path `LoadedModel(.path(_:))` reads.
    /// - Throws: `ExitCode` when the model can be neither downloaded nor found locally
    ///   (`netrunner-net hub-path` said why on stderr); ``TaskFailure`` when it cannot run.
    static func localPath(_ text: String, hub: String? = nil, token: String? = nil) async throws -> String {
        guard isHubModel(text) else { return text }
        var arguments = ["hub-path", text]
        if let hub { arguments += ["--hub", hub] }
        if let token { arguments += ["--token", token] }
        let path = CommandLineMain.networkedPath()
        let result: (output: String?, status: TerminationStatus)
        do {
            let run = try await Subprocess.run(
                .path(FilePath(path)), arguments: Arguments(arguments),
                output: .string(limit: 1 << 16),
                error: .fileDescriptor(.standardError, closeAfterSpawningProcess: false))
            result = (run.standardOutput, run.terminationStatus)
        } catch {
            throw TaskFailure(
                message: "\(text) needs \(path) to reach the hub, which cannot be started: \(error). "
                    + "`make install` (or `swift build --product netrunner-net`) builds it beside netrunner.")
        }
        let output = (result.output ?? "").split(separator: "\n").last.map(String.init) ?? ""
        guard case .exited(0) = result.status else {
            // netrunner-net said why on stderr: its status is this command's.
            if case .exited(let code) = result.status { throw ExitCode(Int32(code)) }
            throw TaskFailure(message: "\(text): \(path) stopped (\(result.status)).")
        }
        guard !output.isEmpty else { throw TaskFailure(message: "\(text): \(path) printed no path.") }
        return output
    }
}
