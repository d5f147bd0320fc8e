import CLiteRT
import NetRunnerTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The dlopen loader and the stderr capture of `loader.c`.
///
/// The first successful `nr_litert_load` in a process wins and later calls return its table
/// whatever their path, and other suites in this process load the runtime; so the in-process
/// tests hold whether or not it is loaded, and the failure paths are also checked in a child.
@Suite("CLiteRT loader and stderr capture")
struct LoaderTests {
    /// A shared library every Linux system has, which is certainly not LiteRT.
    static let otherLibrary: String? = {
        let candidates: [String] = [
            "/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6", "/lib64/libm.so.6",
            "/usr/lib64/libm.so.6", "/lib/aarch64-linux-gnu/libm.so.6",
        ]
        return candidates.first { access($0, F_OK) == 0 }
    }()

    static func load(_ path: String, errorSize: Int = 512) -> (UnsafePointer<NRLiteRtAPI>?, String) {
        var message = [CChar](repeating: 0, count: max(errorSize, 1))
        let table = nr_litert_load(path, &message, errorSize)
        let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return (table, text)
    }

    @Test("A bad path gives NULL and dlopen's reason, or the table already loaded")
    func badPath() {
        let path = "/nonexistent/libLiteRt.so"
        let (table, message) = Self.load(path)
        if let table {
            // Loaded earlier in this process: the first load wins.
            #expect(table == nr_litert_api())
            let loaded = nr_litert_loaded_path().map { String(cString: $0) }
            #expect(loaded != nil)
            #expect(loaded != path)
        } else {
            #expect(!message.isEmpty)
            #expect(message.contains(path))
            #expect(message.contains("No such file"))
        }
    }

    @Test("A short error buffer gets a truncated, terminated message; a NULL one is allowed")
    func shortErrorBuffer() {
        let (table, message) = Self.load("/nonexistent/libLiteRt.so", errorSize: 8)
        if table == nil {
            #expect(message.utf8.count == 7)
            #expect("/nonexistent/libLiteRt.so".hasPrefix(message))
        }
        let unreported = nr_litert_load("/nonexistent/libLiteRt.so", nil, 0)
        #expect(unreported == nil || unreported == nr_litert_api())
    }

    @Test("nr_litert_loaded_path is set exactly when the table is")
    func loadedPathMatchesTable() {
        let table = nr_litert_api()
        let path = nr_litert_loaded_path()
        if table != nil {
            #expect(path != nil)
        }
        if path != nil {
            #expect(nr_litert_api() != nil)
        }
    }

    @Test(
        "A library that is not LiteRT is refused, naming the first missing function",
        .enabled(if: otherLibrary != nil, "no libm found"))
    func otherLibraryInChild() throws {
        let library = try #require(Self.otherLibrary)
        let result = try ProcessResult.run(
            Fixtures.netrunner, ["inspect", Fixtures.path(Fixtures.Synthetic.dynamicBatch)],
            environment: ["NETRUNNER_LITERT_LIBRARY": library])
        #expect(result.status != 0)
        #expect(result.stderr.contains("\(library) does not export LiteRtCreateEnvironment (is it LiteRT 2.3?)"))
    }

    @Test("A path dlopen cannot open, in a child: the loader's NULL becomes dlopen's reason on stderr")
    func unopenableLibraryInChild() throws {
        // A directory exists, so it reaches dlopen, which cannot open it.
        let result = try ProcessResult.run(
            Fixtures.netrunner, ["inspect", Fixtures.path(Fixtures.Synthetic.dynamicBatch)],
            environment: ["NETRUNNER_LITERT_LIBRARY": "/tmp"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("Tried: /tmp (/tmp: cannot read file data: Is a directory)"), "\(result.stderr)")
    }

    @Test("Text written to file descriptor 2 during a capture is returned, not printed")
    func stderrCapture() throws {
        let token = nr_stderr_capture_begin()
        #expect(token >= 0)
        let text = "netrunner capture test \(getpid())\n"
        let written = text.withCString { write(STDERR_FILENO, $0, strlen($0)) }
        let captured = nr_stderr_capture_end(token)
        defer { free(captured) }
        #expect(written == text.utf8.count)
        let output = try #require(captured.map { String(cString: $0) })
        #expect(output.contains(text))
    }

    @Test("A capture with nothing written returns NULL or an empty string")
    func emptyCapture() {
        let token = nr_stderr_capture_begin()
        let captured = nr_stderr_capture_end(token)
        defer { free(captured) }
        if let captured {
            // Other threads may write while the capture runs; this test writes nothing.
            #expect(!String(cString: captured).contains("netrunner capture test"))
        }
    }

    @Test("nr_anonymous_file gives a readable and writable descriptor")
    func anonymousFile() throws {
        let descriptor = nr_anonymous_file("netrunner-test")
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        let bytes: [UInt8] = Array("hello".utf8)
        #expect(bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == 5)
        var read = [UInt8](repeating: 0, count: 5)
        #expect(read.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, 5, 0) } == 5)
        #expect(read == bytes)
        #expect(fcntl(descriptor, F_GETFD) & FD_CLOEXEC != 0)
    }
}
