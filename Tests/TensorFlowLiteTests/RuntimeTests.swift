import Foundation
import NetRunnerTestSupport
import Testing

@testable import TensorFlowLite

/// Where the LiteRT runtime is looked for, and what the `netrunner` tool says on stderr.
/// Tests that change the environment run `netrunner` as a child, so this process's runtime
/// and environment stay as they are for the other tests.
@Suite("Runtime")
struct RuntimeTests {
    static let model = Fixtures.path(Fixtures.Synthetic.dynamicBatch)
    static let environment = ProcessInfo.processInfo.environment

    /// Where `scripts/install-runtime.sh` puts the runtime, by its own rules.
    static func expectedInstalledPath(xdgDataHome: String?, home: String?) -> String {
        let dataHome: String
        if let xdgDataHome, xdgDataHome.hasPrefix("/") {
            dataHome = xdgDataHome
        } else {
            dataHome = (home ?? "") + "/.local/share"
        }
        return dataHome + "/netrunner/litert-2.3.0/libLiteRt.so"
    }

    /// Runs `netrunner` with extra environment variables.
    static func netrunner(_ arguments: [String], environment: [String: String?] = [:]) throws -> ProcessResult {
        try ProcessResult.run(Fixtures.netrunner, arguments, environment: environment)
    }

    /// The lines of `text`, without empty ones.
    static func lines(_ text: String) -> [Substring] {
        text.split(separator: "\n", omittingEmptySubsequences: true)
    }

    // MARK: - In this process

    @Test("The runtime's version, file name, variable and install command are the documented ones")
    func constants() {
        #expect(Runtime.version == "2.3.0")
        #expect(Runtime.libraryFileName == "libLiteRt.so")
        #expect(Runtime.environmentVariable == "NETRUNNER_LITERT_LIBRARY")
        #expect(Runtime.installCommand == "scripts/install-runtime.sh")
    }

    @Test("installedPath follows XDG_DATA_HOME when it is absolute, else HOME/.local/share")
    func installedPath() {
        let expected = Self.expectedInstalledPath(
            xdgDataHome: Self.environment["XDG_DATA_HOME"], home: Self.environment["HOME"])
        #expect(Runtime.installedPath == expected)
    }

    @Test("searchPaths: the variable, beside the executable, the package's lib folder, the install folder, the system")
    func searchPathsOrder() throws {
        var expected: [String] = []
        if let explicit = Self.environment[Runtime.environmentVariable], !explicit.isEmpty {
            expected.append(explicit)
        }
        // The test runner lives in the products folder, beside netrunner.
        expected.append(Fixtures.productsFolder.appendingPathComponent("libLiteRt.so").path)
        expected.append(
            Fixtures.productsFolder.deletingLastPathComponent().appendingPathComponent("lib/netrunner/libLiteRt.so")
                .path)
        expected.append(Runtime.installedPath)
        expected.append("libLiteRt.so")
        #expect(Runtime.searchPaths == expected)
    }

    @Test("packagedPath: the Debian package's /usr/lib/netrunner beside /usr/bin")
    func packagedPath() {
        #expect(Runtime.packagedPath(executableFolder: "/usr/bin") == "/usr/lib/netrunner/libLiteRt.so")
        #expect(Runtime.packagedPath(executableFolder: "/opt/x/bin") == "/opt/x/lib/netrunner/libLiteRt.so")
        #expect(Runtime.packagedPath(executableFolder: "/bin") == "/lib/netrunner/libLiteRt.so")
    }

    @Test("After load(), isLoaded is true and loadedPath is one of the search paths")
    func loaded() throws {
        try Runtime.load()
        #expect(Runtime.isLoaded)
        let path = try #require(Runtime.loadedPath)
        #expect(Runtime.searchPaths.contains(path))
        // Loading again is free and changes nothing.
        try Runtime.load()
        #expect(Runtime.loadedPath == path)
    }

    @Test("LoadError lists every attempt and names the install command")
    func loadErrorDescription() {
        let error = Runtime.LoadError(attempts: [
            (path: "/a/libLiteRt.so", reason: "no such file"), (path: "libLiteRt.so", reason: "not found"),
        ])
        #expect(
            error.description
                == "The LiteRT runtime (libLiteRt.so from ai-edge-litert 2.3.0) could not be loaded; install it with "
                + "`scripts/install-runtime.sh` or set NETRUNNER_LITERT_LIBRARY to its path. Tried: "
                + "/a/libLiteRt.so (no such file); libLiteRt.so (not found).")
        #expect(
            error == Runtime.LoadError(attempts: [("/a/libLiteRt.so", "no such file"), ("libLiteRt.so", "not found")]))
        #expect(error != Runtime.LoadError(attempts: [("/a/libLiteRt.so", "no such file")]))
    }

    // MARK: - In a child process

    @Test("A runtime named by NETRUNNER_LITERT_LIBRARY that does not exist: one stderr line, exit non-zero")
    func explicitLibraryMissing() throws {
        let result = try Self.netrunner(
            ["inspect", Self.model], environment: [Runtime.environmentVariable: "/nonexistent/libLiteRt.so"])
        #expect(result.status != 0)
        #expect(result.stdout.isEmpty)
        let lines = Self.lines(result.stderr)
        #expect(lines.count == 1, "\(result.stderr)")
        let line = String(lines.first ?? "")
        #expect(line.contains("scripts/install-runtime.sh"))
        #expect(line.contains("/nonexistent/libLiteRt.so"))
        // An explicit choice is not second-guessed: nothing else was tried.
        #expect(line.contains("Tried: /nonexistent/libLiteRt.so (no such file)."))
    }

    @Test("A file named by NETRUNNER_LITERT_LIBRARY that is no library: dlopen's reason on one line")
    func explicitLibraryNotALibrary() throws {
        let notALibrary = Fixtures.path("Tests/Fixtures/Photos/test/chelsea.png")
        let result = try Self.netrunner(
            ["inspect", Self.model], environment: [Runtime.environmentVariable: notALibrary])
        #expect(result.status != 0)
        let lines = Self.lines(result.stderr)
        #expect(lines.count == 1, "\(result.stderr)")
        let line = String(lines.first ?? "")
        #expect(line.contains(notALibrary))
        #expect(line.contains("invalid ELF header"))
    }

    @Test("The runtime is found in $XDG_DATA_HOME/netrunner/litert-2.3.0")
    func xdgDataHomeIsUsed() throws {
        try Runtime.load()
        let real = try #require(Runtime.loadedPath)
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let installed = folder.path("data/netrunner/litert-2.3.0")
        try FileManager.default.createDirectory(atPath: installed, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: installed + "/libLiteRt.so", withDestinationPath: real)

        let result = try Self.netrunner(
            ["inspect", "--json", Self.model],
            environment: [
                "XDG_DATA_HOME": folder.path("data"), "HOME": folder.path("home"), Runtime.environmentVariable: nil,
            ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("LiteRT 2.3.0 (\(installed)/libLiteRt.so)"), "\(result.stdout)")
    }

    @Test("A relative XDG_DATA_HOME is ignored for HOME/.local/share, and every place tried is listed")
    func relativeXDGDataHome() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let home = folder.path("home")
        let result = try Self.netrunner(
            ["inspect", Self.model],
            environment: [
                "XDG_DATA_HOME": "relative/data", "HOME": home, Runtime.environmentVariable: nil,
                "LD_LIBRARY_PATH": folder.path("empty"),
            ])
        #expect(result.status != 0)
        let lines = Self.lines(result.stderr)
        #expect(lines.count == 1, "\(result.stderr)")
        let line = String(lines.first ?? "")
        let expected = Self.expectedInstalledPath(xdgDataHome: "relative/data", home: home)
        #expect(expected == home + "/.local/share/netrunner/litert-2.3.0/libLiteRt.so")
        #expect(line.contains("\(expected) (no such file)"), "\(line)")
        // Beside the tool (the real path the kernel reports for it; `make test-asan` runs the plain build's).
        let beside = URL(fileURLWithPath: Fixtures.netrunner).resolvingSymlinksInPath().deletingLastPathComponent()
        #expect(line.contains(beside.appendingPathComponent("libLiteRt.so").path + " (no such file)"), "\(line)")
        #expect(!line.contains("relative/data"))
    }

    @Test("netrunner inspect prints nothing on stderr: the runtime's INFO lines are silenced")
    func inspectIsQuiet() throws {
        for model in [Self.model, Fixtures.path(Fixtures.MobileNet.uint8)] {
            let result = try Self.netrunner(["inspect", model])
            #expect(result.status == 0)
            #expect(result.stderr == "", "\(model)")
            #expect(!result.stdout.isEmpty)
            #expect(!result.stdout.contains("INFO"))
        }
    }

    @Test("netrunner bench --verbose shows the runtime's log lines, which mention XNNPACK")
    func benchVerboseShowsRuntimeLog() throws {
        let verbose = try Self.netrunner(["bench", "--runs", "1", "--verbose", Self.model])
        #expect(verbose.status == 0, "\(verbose.stderr)")
        #expect(verbose.stderr.contains("XNNPACK"), "\(verbose.stderr)")
        let quiet = try Self.netrunner(["bench", "--runs", "1", Self.model])
        #expect(quiet.status == 0, "\(quiet.stderr)")
        #expect(quiet.stderr == "")
    }
}
