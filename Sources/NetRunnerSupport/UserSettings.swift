// The settings a user gives once instead of on every command line: which models folder `--model`
// ids are looked up in, and which hub `hub:` models come from.
//
// Invariants: a flag wins over the environment, the environment over the settings file, the file
// over the defaults; a settings file that is there but wrong (not JSON, an unknown setting, a
// value of the wrong kind, a relative path) is an error naming the file and the line's setting,
// never silently ignored.

import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// NetRunner's user settings: flags, then the environment, then the settings file, then defaults.
///
/// The settings file is JSON, at `$NETRUNNER_CONFIG`, else `$XDG_CONFIG_HOME/netrunner/config.json`,
/// else `~/.config/netrunner/config.json`:
///
///     { "models": "/srv/models", "hub": "https://hub.example.com" }
///
/// Each setting has an environment variable of the same meaning (``Setting/environmentVariable``).
/// Paths in the file are absolute or start with `~/`. The hub's key is never read from the
/// file: it stays in `NETRUNNER_HUB_TOKEN` or `--token`, as other secrets do.
package enum UserSettings {
    /// One setting.
    package enum Setting: String, CaseIterable, Sendable {
        /// The models folder `--model` ids are looked up in (`--models`).
        case models
        /// The hub of `hub:` models (`--hub`).
        case hub

        /// The environment variable that sets it.
        package var environmentVariable: String {
            switch self {
            case .models: "NETRUNNER_MODELS"
            case .hub: "NETRUNNER_HUB"
            }
        }

        /// Whether its value is a path (made absolute from `~/`, refused when relative in the file).
        var isPath: Bool { self == .models }
    }

    /// A settings file that cannot be used, with why.
    package struct FileProblem: Error, CustomStringConvertible {
        /// The file.
        package var path: String
        /// Why it cannot be used.
        package var reason: String
        /// One sentence naming the file.
        package var description: String {
            "The settings file \(path) \(reason). Fix or remove it (its settings: "
                + Setting.allCases.map(\.rawValue).joined(separator: ", ") + "; see netrunner --help)."
        }
    }

    /// Where a value came from.
    package enum Source: Equatable, Sendable {
        /// The environment variable of that name.
        case environment(String)
        /// The settings file at that path.
        case file(String)
    }

    /// The environment variable naming the settings file.
    package static let fileVariable = "NETRUNNER_CONFIG"

    /// The largest settings file read.
    static let maximumFileSize = 65_536

    /// The settings file's path: `$NETRUNNER_CONFIG`, else `$XDG_CONFIG_HOME/netrunner/config.json`
    /// (an absolute XDG_CONFIG_HOME only, as the XDG specification says), else
    /// `~/.config/netrunner/config.json`; `nil` when no home folder is known.
    package static var filePath: String? {
        if let path = environment(fileVariable) { return path }
        if let folder = environment("XDG_CONFIG_HOME"), folder.hasPrefix("/") {
            return folder + "/netrunner/config.json"
        }
        return homeFolder.map { $0 + "/.config/netrunner/config.json" }
    }

    /// A setting's value from the environment, else from the settings file, with where it came
    /// from; `nil` when neither sets it (an empty variable sets nothing).
    ///
    /// - Parameter setting: The setting.
    /// - Returns: The value and its source.
    /// - Throws: ``FileProblem`` when the settings file is there but cannot be used.
    package static func value(_ setting: Setting) throws(FileProblem) -> (value: String, source: Source)? {
        if let value = environment(setting.environmentVariable) {
            return (value, .environment(setting.environmentVariable))
        }
        guard let path = filePath else { return nil }
        let values = try fileValues(path)
        return values[setting].map { ($0, .file(path)) }
    }

    /// The settings of the file at `path` (none when there is no file).
    ///
    /// - Parameter path: The settings file.
    /// - Returns: Each setting the file gives.
    /// - Throws: ``FileProblem`` when the file is there but is not a JSON object of known
    ///   settings with string values (paths absolute or from `~/`).
    package static func fileValues(_ path: String) throws(FileProblem) -> [Setting: String] {
        var info = stat()
        if PathText.withCString(path, { stat($0, &info) }) != 0 && errno == ENOENT { return [:] }
        let data: Data
        do {
            data = try FileIO.contents(of: path, maximumSize: maximumFileSize)
        } catch {
            throw FileProblem(path: path, reason: "cannot be read (\(error.reason))")
        }
        guard let object = try? JSONSerializationFree.object(data) else {
            throw FileProblem(path: path, reason: "is not a JSON object of settings")
        }
        var values: [Setting: String] = [:]
        for (key, value) in object.sorted(by: { $0.key < $1.key }) {
            guard let setting = Setting(rawValue: key) else {
                let guess = closestMatch(to: key, in: Setting.allCases.map(\.rawValue)).map { " (did you mean \($0)?)" }
                throw FileProblem(path: path, reason: "names an unknown setting \"\(key)\"\(guess ?? "")")
            }
            guard let text = value else {
                throw FileProblem(path: path, reason: "gives \"\(key)\" a value that is not a string")
            }
            guard !text.isEmpty else { continue }
            if setting.isPath {
                guard let expanded = expandingHome(text), expanded.hasPrefix("/") else {
                    throw FileProblem(
                        path: path,
                        reason: "gives \"\(key)\" the relative path \(text) (use an absolute path, or ~/...)")
                }
                values[setting] = expanded
            } else {
                values[setting] = text
            }
        }
        return values
    }

    /// `~/rest` with the home folder in place of `~`; other paths as they are; `nil` for `~`
    /// paths when no home folder is known.
    static func expandingHome(_ path: String) -> String? {
        guard path == "~" || path.hasPrefix("~/") else { return path }
        return homeFolder.map { $0 + path.dropFirst() }
    }

    /// The home folder: `$HOME`, else the password database's.
    static var homeFolder: String? { environment("HOME") ?? PrivateFolder.passwordDatabaseHome() }

    /// A non-empty environment variable.
    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// A flat JSON object of string (or null) values, read with FoundationEssentials' decoder.
private enum JSONSerializationFree {
    /// Any JSON value, remembering only strings.
    private struct Value: Decodable {
        var text: String?
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            text = try? container.decode(String.self)
        }
    }

    /// The object's members, a member that is not a string as `nil`.
    static func object(_ data: Data) throws -> [String: String?] {
        try JSONDecoder().decode([String: Value].self, from: data).mapValues(\.text)
    }
}
