#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The LiteRT runtime library that every ``Interpreter`` runs on.
///
/// NetRunner does not link against LiteRT. The official runtime, `libLiteRt.so` from the
/// PyPI wheel `ai-edge-litert==2.3.0`, is opened with `dlopen` the first time it is needed,
/// from the first of these places that holds it:
///
/// 1. the file named by the environment variable `NETRUNNER_LITERT_LIBRARY`;
/// 2. `libLiteRt.so` in the folder of the running executable;
/// 3. `../lib/netrunner/libLiteRt.so` from the folder of the running executable, where the
///    Debian package puts it (`/usr/bin/netrunner` finds `/usr/lib/netrunner/libLiteRt.so`,
///    see ``packagedPath(executableFolder:)``);
/// 4. `$XDG_DATA_HOME/netrunner/litert-2.3.0/libLiteRt.so` (by default
///    `~/.local/share/netrunner/litert-2.3.0/libLiteRt.so`), where
///    `scripts/install-runtime.sh` puts it;
/// 5. the system's library search path (`LD_LIBRARY_PATH`, `ldconfig`).
///
/// - Note: Loading is thread-safe and happens once per process; the library stays loaded.
public enum Runtime {
    /// The LiteRT version NetRunner declares its C API for.
    public static let version = "2.3.0"

    /// The environment variable that names the runtime library file, checked first.
    public static let environmentVariable = "NETRUNNER_LITERT_LIBRARY"

    /// The command, run from a clone of NetRunner, that installs the runtime.
    public static let installCommand = "scripts/install-runtime.sh"

    #if os(macOS)
        /// The runtime library's file name on this platform.
        public static let libraryFileName = "libLiteRt.dylib"
    #else
        /// The runtime library's file name on this platform.
        public static let libraryFileName = "libLiteRt.so"
    #endif

    /// Why the runtime could not be loaded: each place tried, with what went wrong there.
    public struct LoadError: Error, Equatable, CustomStringConvertible {
        /// The places tried, in order, each with the reason it failed.
        public let attempts: [(path: String, reason: String)]

        /// Whether two errors tried the same places with the same outcomes.
        public static func == (lhs: LoadError, rhs: LoadError) -> Bool {
            lhs.attempts.map(\.path) == rhs.attempts.map(\.path)
                && lhs.attempts.map(\.reason) == rhs.attempts.map(\.reason)
        }

        /// One line: what is missing, the command that installs it, and where it was looked for.
        public var description: String {
            let tried = attempts.map { "\($0.path) (\($0.reason))" }.joined(separator: "; ")
            return "The LiteRT runtime (\(Runtime.libraryFileName) from ai-edge-litert \(Runtime.version)) "
                + "could not be loaded; install it with `\(Runtime.installCommand)` "
                + "or set \(Runtime.environmentVariable) to its path. Tried: \(tried)."
        }
    }

    /// The places the runtime is looked for, in order (see ``Runtime``).
    public static var searchPaths: [String] {
        var paths: [String] = []
        if let explicit = environment(environmentVariable), !explicit.isEmpty {
            paths.append(explicit)
        }
        if let folder = executableFolder() {
            paths.append(folder + "/" + libraryFileName)
            paths.append(packagedPath(executableFolder: folder))
        }
        paths.append(installedPath)
        paths.append(libraryFileName)
        return paths
    }

    /// Where the Debian package installs the runtime, given the folder of the running executable:
    /// `lib/netrunner/` beside that folder (`/usr/bin` → `/usr/lib/netrunner/libLiteRt.so`).
    ///
    /// - Parameter executableFolder: The folder the running executable is in, without a
    ///   trailing slash.
    /// - Returns: The path of the runtime library the package ships.
    public static func packagedPath(executableFolder: String) -> String {
        var parent = executableFolder
        if let slash = parent.lastIndex(of: "/") {
            parent = String(parent[..<slash])
        } else {
            parent = "."
        }
        return parent + "/lib/netrunner/" + libraryFileName
    }

    /// Where `scripts/install-runtime.sh` installs the runtime for the current user.
    public static var installedPath: String {
        let dataHome: String
        if let xdg = environment("XDG_DATA_HOME"), xdg.hasPrefix("/") {
            dataHome = xdg
        } else {
            dataHome = (environment("HOME") ?? "") + "/.local/share"
        }
        return dataHome + "/netrunner/litert-\(version)/" + libraryFileName
    }

    /// The path the runtime was loaded from, or `nil` if it is not loaded yet.
    public static var loadedPath: String? {
        LiteRT.loadedPath
    }

    /// Whether the runtime is loaded in this process.
    public static var isLoaded: Bool { LiteRT.isLoaded }

    /// Loads the runtime now, if it is not loaded yet.
    ///
    /// Every ``Interpreter`` calls this itself; call it early to fail fast or to pay the
    /// 50-150 ms of the first `dlopen` at a time of your choosing.
    ///
    /// - Throws: ``LoadError`` listing every place tried when none of them worked.
    public static func load() throws(LoadError) {
        if isLoaded { return }
        var attempts: [(path: String, reason: String)] = []
        let explicit = environment(environmentVariable).flatMap { $0.isEmpty ? nil : $0 }
        for path in searchPaths {
            // A bare file name goes to the system's search path; a path must exist.
            if path.contains("/") && access(path, F_OK) != 0 {
                attempts.append((path, "no such file"))
                if path == explicit { break }  // an explicit choice is not second-guessed
                continue
            }
            guard let reason = LiteRT.load(path) else { return }
            attempts.append((path, reason.isEmpty ? "could not be opened" : reason))
            if path == explicit { break }
        }
        throw LoadError(attempts: attempts)
    }

    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// Decodes a NUL-terminated C string held in an array.
    static func cString(_ characters: [CChar]) -> String {
        String(decoding: characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func executableFolder() -> String? {
        ChildProcess.executableFolder()
    }

    /// Writes text to the process's standard error without losing it to the runtime's log
    /// capture.
    ///
    /// While a model loads or compiles, file descriptor 2 briefly points at a capture
    /// file (to keep the runtime's INFO chatter out of the user's terminal), and a line another
    /// thread wrote then would be taken for runtime output. This waits for such a window to end.
    ///
    /// - Parameter text: The text, written as it is (add the newline).
    public static func writeToStandardError(_ text: String) {
        RuntimeLog.writeToStandardError(text)
    }
}
