import Foundation
import NetRunnerTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Ctrl-C (SIGINT) and SIGTERM in every long command, with the default `--threads` (every core)
/// and with more threads than cores, as Kubernetes eviction and Slurm preemption send them: the
/// process exits within a deadline after the signal, a second Ctrl-C exits at once, and a
/// rerun finishes exactly what the interrupted run left, each image once.
///
/// Every wait is for a condition, with a deadline; a process that outlives its deadline is
/// killed and the test fails (it never hangs the suite).
@Suite("Ctrl-C and SIGTERM in every long command")
struct InterruptionTests {
    /// A signal the tests send: `twice` is Ctrl-C, then Ctrl-C again once the first is noted.
    enum Stop: String, CaseIterable, CustomTestStringConvertible {
        case interrupt = "SIGINT"
        case twice = "SIGINT twice"
        case terminate = "SIGTERM"

        var testDescription: String { rawValue }
        /// The exit status the command promises.
        var status: Int32 { self == .terminate ? 143 : 130 }
        /// How long after the (last) signal the process may take to exit: SIGTERM's 2 s
        /// (docs/cli.md), a second Ctrl-C's "at once", and a first Ctrl-C's images in flight,
        /// each with a margin for a loaded machine.
        var deadline: TimeInterval {
            switch self {
            case .interrupt: 5
            case .twice: 2
            case .terminate: 3
            }
        }
    }

    /// `--threads`: the default (every core) and more threads than this machine's cores.
    enum Threads: String, CaseIterable, CustomTestStringConvertible {
        case standard = "default threads"
        case oversubscribed = "--threads 8"

        var testDescription: String { rawValue }
        var arguments: [String] { self == .standard ? [] : ["--threads", "8"] }
    }

    /// Each stop once, and each thread count: a first Ctrl-C and SIGTERM with more threads than
    /// cores (the most work in flight when the signal comes), a second Ctrl-C with the default.
    /// (Every pair, 6 runs a command, took 69 CPU-seconds of make test; these 3 cover each
    /// signal's path and each count's.)
    static let stops = [(Stop.interrupt, Threads.oversubscribed), (.twice, .standard), (.terminate, .oversubscribed)]

    /// What a child wrote to one of its pipes so far.
    final class Captured: Sendable {
        private let data = Mutex(Data())

        func append(_ chunk: Data) { data.withLock { $0.append(chunk) } }
        var text: String { data.withLock { String(decoding: $0, as: UTF8.self) } }
    }

    /// A child process whose output is read as it comes, so it never blocks on a full pipe.
    final class Child: @unchecked Sendable {
        let process = Process()
        private let output = Captured()
        private let errors = Captured()
        private let outPipe = Pipe()
        private let errPipe = Pipe()
        private var readers: [PipeReader] = []

        init(_ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: Fixtures.netrunner)
            process.arguments = arguments
            SpawnLog.record(Fixtures.netrunner, arguments)
            process.standardOutput = outPipe
            process.standardError = errPipe
            try process.run()
            readers = [(outPipe, output), (errPipe, errors)].map { pipe, store in
                PipeReader(pipe.fileHandleForReading) { store.append($0) }
            }
        }

        var stdout: String { output.text }
        var stderr: String { errors.text }

        /// Waits until `condition` holds, the process exits or `seconds` pass; whether it holds.
        @discardableResult
        func wait(upTo seconds: TimeInterval, until condition: () -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while !condition() {
                guard process.isRunning, Date() < deadline else { return condition() }
                usleep(10_000)
            }
            return true
        }

        func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

        /// Waits for the exit: the seconds from `since`, or `nil` (the process is then killed)
        /// when it still runs `seconds` after `since`.
        func exitTime(since: Date, within seconds: TimeInterval) -> TimeInterval? {
            let deadline = since.addingTimeInterval(seconds)
            while process.isRunning, Date() < deadline { usleep(5_000) }
            let elapsed = Date().timeIntervalSince(since)
            if process.isRunning {
                send(SIGKILL)
                process.waitUntilExit()
                return nil
            }
            process.waitUntilExit()
            // What is left in the pipes, now that the writer is gone.
            for reader in readers { reader.waitForEnd() }
            return elapsed
        }

        /// Sends `stop`'s signal (twice: the second once the first is noted), and expects the
        /// exit within its deadline with its status. Returns the seconds from the first signal
        /// to the exit, `nil` when it did not exit in time.
        @discardableResult
        func stop(_ stop: Stop, comment: String, sourceLocation: SourceLocation = #_sourceLocation) -> TimeInterval? {
            let signalled = Date()
            send(stop == .terminate ? SIGTERM : SIGINT)
            var since = signalled
            if stop == .twice {
                // A run that has already ended needs no second one.
                wait(upTo: 5) { stderr.contains("Ctrl-C again") }
                since = Date()
                send(SIGINT)
            }
            let elapsed = exitTime(since: since, within: stop.deadline)
            #expect(
                elapsed != nil,
                "\(comment): still running \(stop.deadline) s after \(stop.rawValue); stderr: \(stderr.suffix(2000))",
                sourceLocation: sourceLocation)
            #expect(
                process.terminationStatus == stop.status,
                "\(comment): exit \(process.terminationStatus); stderr: \(stderr.suffix(2000))",
                sourceLocation: sourceLocation)
            return elapsed.map { $0 + since.timeIntervalSince(signalled) }
        }
    }

    static func lineCount(_ path: String) -> Int {
        ((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()).count { $0 == UInt8(ascii: "\n") }
    }

    static func jsonLines(_ path: String) throws -> [[String: Any]] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.isEmpty || text.hasSuffix("\n"), "only whole lines in \(path)")
        return try text.split(separator: "\n").map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    @Test(
        "bulk stops within its deadline and the rerun finishes exactly the rest",
        arguments: stops)
    func bulk(stop: Stop, threads: Threads) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        // 100 photos and a broken file: a stop comes after 10-13 results (seen), and every image
        // the stop leaves is run again by the rerun (400 made these 12 cases a quarter of the
        // suite's processor time).
        let root = try BulkCommandTests().manyPhotos(100, in: folder)
        let output = folder.path("out.jsonl")
        let command = ["bulk", root, "--output", output, "--no-progress"] + threads.arguments
        let child = try Child(command)
        #expect(child.wait(upTo: 60) { Self.lineCount(output) >= 10 }, "results are written: \(child.stderr)")
        let seconds = child.stop(stop, comment: "bulk, \(threads.rawValue)")
        let partial = try Self.jsonLines(output).map { try #require($0["image"] as? String) }
        #expect(partial.count > 0 && partial.count < 101, "stopped after \(partial.count) of 101 images")
        if stop != .twice {
            #expect(
                child.stderr.contains("Interrupted after \(partial.count) of 101 images"),
                "\(child.stderr.suffix(2000))")
        }
        print("bulk, \(threads.rawValue), \(stop.rawValue): exit after \(seconds ?? -1) s, \(partial.count) images")

        let rerun = try ProcessResult.run(Fixtures.netrunner, command)
        #expect(rerun.status == 1, "the corrupt file still fails: \(rerun.stderr)")
        #expect(
            rerun.stderr.contains(
                "Resuming \(output): \(partial.count) results already there, \(101 - partial.count) of 101 images to go"
            ), "\(rerun.stderr)")
        let all = try Self.jsonLines(output).map { try #require($0["image"] as? String) }
        #expect(all.count == 101 && Set(all).count == 101, "every image exactly once: \(all.count) lines")
        #expect(Array(all.prefix(partial.count)) == partial, "earlier lines kept as they were")
    }

    @Test(
        "evaluate stops within its deadline and the rerun finishes exactly the rest",
        arguments: stops)
    func evaluate(stop: Stop, threads: Threads) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        // One model, four photos, 25 iterations: 100 runs (a stop comes after 10-11).
        let bundle = try EvaluateHostileTests().bundle(
            in: folder, images: ["images/coffee.jpg", "images/a.jpg", "images/b.jpg", "images/c.jpg"],
            labels: ["images/a.jpg": "bald eagle", "images/b.jpg": "bald eagle", "images/c.jpg": "bald eagle"],
            iterations: 25)
        for name in ["a.jpg", "b.jpg", "c.jpg"] {
            try FileManager.default.copyItem(
                atPath: Fixtures.path("Tests/Fixtures/Photos/test/eagle.jpg"), toPath: bundle + "/images/" + name)
        }
        let out = folder.path("out")
        let results = out + "/t/results.jsonl"
        let command =
            ["evaluate", "--models", EvaluateHostileTests.models, "--no-progress", bundle, "-o", out]
            + threads.arguments
        let child = try Child(command)
        #expect(child.wait(upTo: 60) { Self.lineCount(results) >= 10 }, "results are written: \(child.stderr)")
        let seconds = child.stop(stop, comment: "evaluate, \(threads.rawValue)")
        let key = { (line: [String: Any]) in "\(line["image"] ?? "")#\(line["iteration"] ?? "")" }
        let partial = try Self.jsonLines(results).map(key)
        #expect(partial.count > 0 && partial.count < 100, "stopped after \(partial.count) of 100 runs")
        print("evaluate, \(threads.rawValue), \(stop.rawValue): exit after \(seconds ?? -1) s, \(partial.count) runs")

        let rerun = try ProcessResult.run(Fixtures.netrunner, command)
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(rerun.stderr.contains("resuming \(results), \(100 - partial.count) runs to go"), "\(rerun.stderr)")
        let all = try Self.jsonLines(results).map(key)
        #expect(all.count == 100 && Set(all).count == 100, "every run exactly once: \(all.count) lines")
        #expect(Array(all.prefix(partial.count)) == partial, "earlier lines kept as they were")
    }

    @Test("stream stops within its deadline", arguments: stops)
    func stream(stop: Stop, threads: Threads) throws {
        let folder = try TemporaryFolder(prefix: "netrunner-stream")
        defer { folder.remove() }
        // 200 frames, read as fast as they are answered (video mode).
        let clip = try VideoClips.faces(in: folder.url.path, seconds: 20)
        let child = try Child(["stream", clip, "--model", "face", "--json"] + threads.arguments)
        let answered = { child.stdout.count { $0 == "\n" } }
        #expect(child.wait(upTo: 60) { answered() >= 10 }, "frames are answered: \(child.stderr)")
        let seconds = child.stop(stop, comment: "stream, \(threads.rawValue)")
        #expect(answered() < 200, "stopped after \(answered()) of 200 frames")
        print("stream, \(threads.rawValue), \(stop.rawValue): exit after \(seconds ?? -1) s, \(answered()) frames")
    }

    /// The HTTP status `url` answers a GET with, or `nil` when it cannot be reached.
    static func status(of url: URL) -> Int? {
        let status = Mutex<Int?>(nil)
        let finished = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: URLRequest(url: url, timeoutInterval: 10)) { _, response, _ in
            status.withLock { $0 = (response as? HTTPURLResponse)?.statusCode }
            finished.signal()
        }.resume()
        finished.wait()
        return status.withLock { $0 }
    }

    /// A server under load: `clients` threads each sending a request after the other until
    /// told to finish or the server goes away.
    final class Load: Sendable {
        /// The requests answered 200.
        let answered = Atomic<Int>(0)
        private let stopped = Atomic<Bool>(false)
        private let done = DispatchGroup()

        init(_ url: URL, body: Data, clients: Int) {
            for _ in 0..<clients {
                done.enter()
                Thread.detachNewThread { [self] in
                    defer { done.leave() }
                    while !stopped.load(ordering: .relaxed) {
                        var request = URLRequest(url: url, timeoutInterval: 10)
                        request.httpMethod = "POST"
                        request.httpBody = body
                        let finished = DispatchSemaphore(value: 0)
                        let status = Mutex<Int?>(nil)
                        URLSession.shared.dataTask(with: request) { _, response, _ in
                            status.withLock { $0 = (response as? HTTPURLResponse)?.statusCode }
                            finished.signal()
                        }.resume()
                        finished.wait()
                        guard let code = status.withLock({ $0 }) else { return }
                        if code == 200 { answered.add(1, ordering: .relaxed) }
                    }
                }
            }
        }

        /// Stops the clients and waits for them (at most 15 s).
        func finish() {
            stopped.store(true, ordering: .relaxed)
            _ = done.wait(timeout: .now() + 15)
        }
    }

    /// The address a server prints on its first line.
    static func address(of child: Child) -> URL? {
        guard child.wait(upTo: 120, until: { child.stdout.contains("\n") }) else { return nil }
        let text = child.stdout
        guard let range = text.range(of: #"http://127\.0\.0\.1:\d+"#, options: .regularExpression) else { return nil }
        return URL(string: String(text[range]))
    }

    @Test(
        "serve under load stops within 5 s of SIGTERM or Ctrl-C",
        arguments: [Stop.interrupt, .terminate], Threads.allCases)
    func serve(stop: Stop, threads: Threads) throws {
        let child = try Child(
            ["serve", "--port", "0", "--models", Fixtures.path("Models/bundles"), "--no-import"] + threads.arguments)
        let base = try #require(Self.address(of: child), "no address: \(child.stdout) \(child.stderr)")
        let ready = base.appendingPathComponent("v2/health/ready")
        #expect(child.wait(upTo: 120) { Self.status(of: ready) == 200 }, "ready: \(child.stderr)")
        let photo = try Fixtures.data("Tests/Fixtures/Photos/test/coffee.jpg")
        let load = Load(
            base.appendingPathComponent("v1/models/mobilenet-v2-1.0-224-uint8/classify"), body: photo, clients: 8)
        #expect(child.wait(upTo: 60) { load.answered.load(ordering: .relaxed) >= 20 }, "answers: \(child.stderr)")
        let signalled = Date()
        child.send(stop == .terminate ? SIGTERM : SIGINT)
        let seconds = child.exitTime(since: signalled, within: 5)
        load.finish()
        #expect(seconds != nil, "still running 5 s after \(stop.rawValue): \(child.stderr.suffix(2000))")
        #expect(
            child.process.terminationStatus == 0,
            "exit \(child.process.terminationStatus): \(child.stderr.suffix(2000))")
        print("serve, \(threads.rawValue), \(stop.rawValue): exit after \(seconds ?? -1) s")
    }

    @Test("hub serve stops within 5 s of SIGTERM or Ctrl-C", arguments: [Stop.interrupt, .terminate])
    func hubServe(stop: Stop) throws {
        let folder = try TemporaryFolder(prefix: "netrunner-hub")
        defer { folder.remove() }
        let child = try Child(["hub", "serve", "--data", folder.path("data"), "--port", "0", "--admin-key", "k"])
        let base = try #require(Self.address(of: child), "no address: \(child.stdout) \(child.stderr)")
        #expect(child.wait(upTo: 60) { Self.status(of: base.appendingPathComponent("v1/models")) != nil })
        let signalled = Date()
        child.send(stop == .terminate ? SIGTERM : SIGINT)
        let seconds = child.exitTime(since: signalled, within: 5)
        #expect(seconds != nil, "still running 5 s after \(stop.rawValue): \(child.stderr.suffix(2000))")
        #expect(
            child.process.terminationStatus == 0,
            "exit \(child.process.terminationStatus): \(child.stderr.suffix(2000))")
        print("hub serve, \(stop.rawValue): exit after \(seconds ?? -1) s")
    }
}
