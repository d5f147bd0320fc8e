import Foundation
import NetRunnerTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 14: whatever the input (numbers out of range, named pipes, unreadable folders, full
/// disks, concurrent runs, escape sequences in names), the tool neither crashes, hangs,
/// leaks nor corrupts anything silently.
@Suite("netrunner hostile inputs")
struct HostileInputTests {
    struct Outcome {
        var status: Int32
        var stdout: String
        var stderr: String
        var timedOut: Bool
        var seconds: Double
    }

    static let photo = Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")
    static let portrait = Fixtures.path("Tests/Fixtures/Photos/faces/two_portraits.jpg")

    /// Runs the tool, killing it after `deadline` seconds, so a hang fails the test instead of
    /// blocking the suite.
    func run(_ arguments: [String], deadline: Double = 60, executable: String = Fixtures.netrunner) throws -> Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        let start = Date()
        try process.run()
        let finished = DispatchSemaphore(value: 0)
        let killed = Mutex(false)
        let pid = process.processIdentifier
        DispatchQueue.global().async {
            if finished.wait(timeout: .now() + deadline) == .timedOut {
                killed.withLock { $0 = true }
                kill(pid, SIGKILL)
            }
        }
        let group = DispatchGroup()
        nonisolated(unsafe) var outData = Data()
        nonisolated(unsafe) var errData = Data()
        DispatchQueue.global().async(group: group) { outData = out.fileHandleForReading.readDataToEndOfFile() }
        DispatchQueue.global().async(group: group) { errData = err.fileHandleForReading.readDataToEndOfFile() }
        group.wait()
        process.waitUntilExit()
        finished.signal()
        return Outcome(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self), timedOut: killed.withLock { $0 },
            seconds: Date().timeIntervalSince(start))
    }

    @Test(
        "Every numeric option is range-checked: a usage error naming the flag, never a crash",
        arguments: [
            (["bench", "--max-seconds", "nan"], "--max-seconds must be a number of seconds above 0"),
            (["bench", "--max-seconds", "inf"], "--max-seconds must be"),
            (["bench", "--max-seconds", "1e19"], "--max-seconds must be"),
            (["bench", "--max-seconds", "-1"], "--max-seconds must be"),
            (["bench", "--runs", "0"], "--runs must be between 1 and 1000000"),
            (["bench", "--warmup", "-1"], "--warmup must be between 0 and 1000000"),
            (["bench", "--threads", "-1"], "--threads must be between 1 and"),
            (["bench", "--threads", "100000"], "--threads must be between 1 and"),
            (["check", "--timeout", "nan"], "--timeout must be a number of seconds above 0"),
            (["check", "--timeout", "1e300"], "--timeout must be"),
            (["inspect", "--threads", "0"], nil),
            (["classify", "--threads", "-1"], "--threads must be between 1 and"),
            (["classify", "--threads", "100000"], "at most 256"),
            (["classify", "--top", "-3"], "--max-results must be between 1 and 10000"),
            (["classify", "--threshold", "nan"], "--score-threshold must be a number between 0.0 and 1.0"),
            (["classify", "--score-threshold", "-0.5"], "--score-threshold must be"),
            (["detect", "--max-results", "0"], "--max-results must be between 1 and 10000"),
            (["detect", "--label-offset", "-5000"], "--label-offset must be between -1000 and 1000"),
            (["detect", "--threshold", "inf"], "--score-threshold must be"),
            (["bulk", "--top", "0"], "--max-results must be"),
            (["bulk", "--threshold", "2"], "--score-threshold must be"),
            (["bulk", "--threads", "100000"], "--threads must be between 1 and"),
            (["run", "--threads", "-2"], "--threads must be between 1 and"),
            (["evaluate", "--threads", "100000"], "--threads must be between 1 and"),
        ] as [([String], String?)])
    func numericRanges(arguments: [String], message: String?) throws {
        let target =
            switch arguments[0] {
            case "bench", "check", "inspect": [Fixtures.path(Fixtures.MobileNet.uint8)]
            case "run": [Fixtures.path("Tests/Fixtures/Bundles/mobilenet_v2_1.0_224_float32.tiobundle"), Self.photo]
            case "evaluate": [Fixtures.path("TestBundles/imagenet-sample.testbundle")]
            default: [Self.photo]
            }
        if arguments[0] == "inspect" { return }  // inspect has no numeric option
        let result = try run(arguments + target, deadline: 30)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
        if let message { #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)") }
        #expect(!result.stderr.contains("Missing value"), "a negative number is a value: \(result.stderr)")
    }

    @Test("Negative numbers in range are values, not flags")
    func negativeValues() throws {
        let result = try run(["detect", "--label-offset", "-1", "--threshold", "0.5", Self.portrait], deadline: 60)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("box ("), "\(result.stdout)")
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let bundle = try run(
            [
                "bundle", "create", Fixtures.path(Fixtures.MobileNet.float32), "-o", folder.path("m.tiobundle"),
                "--normalize", "-0.5,1",
            ], deadline: 60)
        #expect(bundle.status == 0, "\(bundle.stderr)")
    }

    /// A folder with a named pipe named `name`.
    func fifo(_ name: String, in folder: TemporaryFolder) throws -> String {
        let path = folder.path(name)
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        #expect(mkfifo(path, 0o644) == 0)
        return path
    }

    @Test("A named pipe named like an image, a model, model.json, test.json, labels or --output is refused at once")
    func namedPipes() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let image = try fifo("pipe.jpg", in: folder)
        let model = try fifo("pipe.tflite", in: folder)
        let zip = try fifo("pipe.zip", in: folder)
        let labels = try fifo("labels.txt", in: folder)
        let output = try fifo("out.jsonl", in: folder)
        let csv = try fifo("out.csv", in: folder)
        _ = try fifo("model.tiobundle/model.json", in: folder)
        let testBundle = folder.path("pipe.testbundle")
        _ = try fifo("pipe.testbundle/test.json", in: folder)
        let cases: [[String]] = [
            ["classify", image],
            ["detect", image],
            ["classify", "--model", model, Self.photo],
            ["classify", "--model", zip, Self.photo],
            ["bench", model],
            ["inspect", model],
            ["classify", "--labels", labels, Self.photo],
            ["classify", "--model", folder.path("model.tiobundle"), Self.photo],
            ["bulk", Self.photo, "--output", output],
            ["bulk", Self.photo, "--output", output, "--restart"],
            ["bulk", Self.photo, "--output", csv, "--restart"],
            ["evaluate", testBundle, "--output", folder.path("evaluation")],
        ]
        for arguments in cases {
            let result = try run(arguments, deadline: 20)
            #expect(!result.timedOut, "\(arguments) blocked on a named pipe")
            #expect(result.status == 1, "\(arguments): \(result.status) \(result.stderr)")
            #expect(
                result.stderr.contains("not a regular file") || result.stderr.contains("no readable model.json"),
                "\(arguments): \(result.stderr)")
        }
    }

    @Test("A folder tree with an entry that cannot be searched (a path over PATH_MAX) runs the readable images")
    func unreadableEntries() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let root = folder.path("photos")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.photo, toPath: root + "/coffee.jpg")
        // 25 nested folders of 200 characters: the deepest paths are over PATH_MAX (4096).
        let name = String(repeating: "d", count: 200)
        let script =
            "cd \"$1\" && for i in $(seq 25); do mkdir \(name) && cd -P \(name) || exit 1; done; cp \"$2\" deep.jpg"
        let shell = try run(["-c", script, "sh", root, Self.photo], deadline: 30, executable: "/bin/sh")
        #expect(shell.status == 0, "\(shell.stderr)")
        for command in ["classify", "bulk"] {
            let result = try run([command, root], deadline: 120)
            #expect(result.status == 1, "\(command): an unsearchable entry is a failure: \(result.stderr)")
            #expect(result.stderr.contains("File name too long"), "\(command): \(result.stderr)")
            #expect(!result.stderr.contains("No image files found"), "\(command): \(result.stderr)")
            #expect(result.stdout.contains("coffee.jpg"), "\(command): the readable image runs: \(result.stdout)")
            #expect(result.stdout.contains("espresso"), "\(command): \(result.stdout)")
        }
    }

    @Test("A write error on --output (a file size limit) is a failure with its cause, not a usage error")
    func writeErrors() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let photos = folder.path("photos")
        try FileManager.default.createDirectory(atPath: photos, withIntermediateDirectories: true)
        for index in 0..<40 {
            try FileManager.default.createSymbolicLink(
                atPath: "\(photos)/\(index).jpg", withDestinationPath: Self.photo)
        }
        let output = folder.path("out.jsonl")
        // ulimit -f 1: writes past 512 bytes fail (EFBIG), as on a full disk.
        let script = "ulimit -f 1 && exec \"$1\" bulk \"$2\" --output \"$3\" --threads 1"
        let result = try run(
            ["-c", script, "sh", Fixtures.netrunner, photos, output], deadline: 120, executable: "/bin/sh")
        #expect(result.status == 1, "\(result.stderr)")
        #expect(
            result.stderr.contains("Stopped: \(output): cannot use it for results: File too large"), "\(result.stderr)")
        #expect(!result.stderr.contains("Usage:"), "\(result.stderr)")
        // The write that failed may have left part of a line (as a full disk does); the rerun
        // cuts it off and finishes the run.
        let rerun = try run(["bulk", photos, "--output", output, "--threads", "1"], deadline: 120)
        #expect(rerun.status == 0, "\(rerun.stderr)")
        let lines = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 40)
        let images = try lines.map { line in
            (try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["image"] as? String
        }
        #expect(Set(images).count == 40, "each image once")
    }

    @Test("detect --annotate gives images sharing a base name their own files, and refuses unknown extensions")
    func annotateNames() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        for sub in ["a", "b"] {
            try FileManager.default.createDirectory(atPath: folder.path(sub), withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Self.portrait, toPath: folder.path("\(sub)/x.jpg"))
        }
        let out = folder.path("annotated")
        let result = try run(["detect", folder.path("a"), folder.path("b"), "--annotate", out])
        #expect(result.status == 0, "\(result.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        #expect(names == ["x-2.annotated.png", "x.annotated.png"])
        let again = try run(["detect", folder.path("a"), folder.path("b"), "--annotate", out])
        #expect(again.status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).sorted() == names, "stable names")

        let gif = try run(["detect", folder.path("a/x.jpg"), "--annotate", folder.path("out.gif")])
        #expect(gif.status == 64, "\(gif.stderr)")
        #expect(gif.stderr.contains(".gif is not an image type written here"), "\(gif.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.path("out.gif")), "no folder created")
    }

    @Test("Control characters in file names reach the terminal escaped; JSON output stays valid JSON")
    func escapedOutput() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let good = folder.path("good\u{1B}[31m\u{202E}.jpg")
        try FileManager.default.copyItem(atPath: Self.photo, toPath: good)
        let bad = try folder.write(Data("not an image\u{1B}]0;owned\u{07}".utf8), named: "bad\u{1B}]0;title\u{07}.jpg")
        let text = try run(["classify", "--threads", "1", good, bad])
        #expect(text.status == 1)
        for stream in [text.stdout, text.stderr] {
            #expect(!stream.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || $0.value == 0x202E })
        }
        #expect(text.stdout.contains("good\\u001B[31m\\u202E.jpg"), "\(text.stdout)")
        #expect(text.stderr.contains("bad\\u001B]0;title\\u0007.jpg"), "\(text.stderr)")

        let json = try run(["classify", "--json", "--threads", "1", good, bad])
        let files = try json.stdout.split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return object?["image"] as? String
        }
        #expect(files == [good, bad], "the names survive as JSON strings")

        let model = try run(["classify", "--model", bad, Self.photo])
        #expect(model.status == 1)
        #expect(!model.stderr.contains("\u{1B}"), "errors thrown to the top are escaped too: \(model.stderr)")
    }

    @Test("Two bulk runs on one --output: the second is refused at once, naming the file")
    func concurrentRuns() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let root = try BulkCommandTests().manyPhotos(400, in: folder)
        let output = folder.path("out.csv")
        let first = Process()
        first.executableURL = URL(fileURLWithPath: Fixtures.netrunner)
        first.arguments = ["bulk", root, "--output", output, "--threads", "1"]
        first.standardError = FileHandle.nullDevice
        first.standardOutput = FileHandle.nullDevice
        try first.run()
        defer {
            if first.isRunning { kill(first.processIdentifier, SIGKILL) }
            first.waitUntilExit()
        }
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let size = (try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
            if size > 1000 { break }
            usleep(20_000)
        }
        #expect(first.isRunning)
        for extra in [[], ["--restart"]] {
            let second = try run(["bulk", root, "--output", output] + extra, deadline: 30)
            #expect(second.status == 1, "\(second.stderr)")
            #expect(
                second.stderr.contains("\(output): cannot use it for results: another run is writing it"),
                "\(second.stderr)")
        }
        kill(first.processIdentifier, SIGINT)
        first.waitUntilExit()
        let lines = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("image,answer") }.count == 1, "one header")
        #expect(Set(lines).count == lines.count, "no image twice")
    }
}
