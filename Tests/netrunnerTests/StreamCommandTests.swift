import Foundation
import NetRunnerTestSupport
import Synchronization
import Testing

/// `netrunner stream`: videos made at test time from the committed photos, a live loopback
/// source that drops and comes back; hostile and refused sources are `Sources`
/// (StreamCommandTests+Sources.swift), run serially with these.
@Suite("netrunner stream", .serialized)
struct StreamCommandTests: StreamCommandRunning {
    func summary(_ stderr: String) throws -> [String: Any] {
        let line = try #require(stderr.split(separator: "\n").last { $0.hasPrefix("{\"summary\"") })
        let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        return try #require(object["summary"] as? [String: Any])
    }

    func topLabel(_ line: [String: Any]) -> String? {
        let results = line["inference_results"] as? [String: Any]
        return (results?["classification"] as? [[String: Any]])?.first?["label"] as? String
    }

    @Test(
        "Video mode: every frame of every segment is classified as classify classifies its photo, timestamps from the stream"
    )
    func photosClip() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-stream")
        defer { folder.remove() }
        let clip = try VideoClips.photos(in: folder.url.path)
        let run = try netrunner(["stream", clip, "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let frames = try lines(run.stdout)
        #expect(frames.count == 32)
        for (segment, photo) in VideoClips.photoOrder.enumerated() {
            let still = try netrunner(["classify", "--json", Fixtures.path("Tests/Fixtures/Photos/test/" + photo)])
            let stillLine = try #require(try lines(still.stdout).first)
            let expected = try #require(topLabel(stillLine))
            for offset in 0..<VideoClips.framesPerPhoto {
                let index = segment * VideoClips.framesPerPhoto + offset
                let frame = frames[index]
                #expect(frame["frame"] as? Int == index)
                #expect(frame["timestamp_ms"] as? Double == Double(index) * 1000 / 8)
                #expect(topLabel(frame) == expected, "frame \(index) of \(photo)")
            }
        }
        let totals = try summary(run.stderr)
        #expect(totals["received"] as? Int == 32 && totals["inferred"] as? Int == 32 && totals["decoded"] as? Int == 32)
        #expect(totals["mode"] as? String == "video")

        // Every 8th frame: ffmpeg sends frames 0, 8, 16, 24 only, under their own numbers.
        let sparse = try netrunner(["stream", clip, "--json", "--every", "8"])
        #expect(sparse.status == 0, "\(sparse.stderr)")
        #expect(try lines(sparse.stdout).map { $0["frame"] as? Int } == [0, 8, 16, 24])
        let sparseTotals = try summary(sparse.stderr)
        #expect(sparseTotals["skipped_by_every"] as? Int == 28 && sparseTotals["inferred"] as? Int == 4)

        // The same clip on standard input, in a container that streams (MPEG-TS; an MP4 whose
        // index is at its end cannot be read from a pipe, and says so).
        let ts = folder.path("photos.ts")
        try VideoClips.ffmpeg(["-loglevel", "error", "-i", clip, "-c", "copy", ts])
        let piped = try ProcessResult.run(
            "/bin/sh", ["-c", "\"$0\" stream - --json --every 8 < \"$1\"", Fixtures.netrunner, ts])
        #expect(piped.status == 0, "\(piped.stderr)")
        let pipedLabels = try lines(piped.stdout).compactMap(topLabel)
        let fileLabels = try lines(sparse.stdout).compactMap(topLabel)
        #expect(pipedLabels == fileLabels && pipedLabels.count == 4)
    }

    @Test("Faces in a video are found at the boxes detect finds on the still (IoU >= 0.9), in the source's pixels")
    func facesClip() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-stream")
        defer { folder.remove() }
        let clip = try VideoClips.faces(in: folder.url.path)
        let still = try netrunner([
            "detect", "--json", Fixtures.path("Tests/Fixtures/Photos/faces/two_portraits.jpg"),
        ])
        let stillLine = try #require(try lines(still.stdout).first)
        let expected = try boxes(stillLine)
        #expect(expected.count == 2)
        let run = try netrunner(["stream", clip, "--model", "face", "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let frames = try lines(run.stdout)
        #expect(frames.count == 10)
        for frame in frames {
            #expect(frame["image_width"] as? Int == 640 && frame["image_height"] as? Int == 400)
            let found = try boxes(frame)
            #expect(found.count == 2, "frame \(frame["frame"] ?? "?")")
            for box in expected {
                let best = found.map { iou(box, $0) }.max() ?? 0
                #expect(best >= 0.9, "frame \(frame["frame"] ?? "?"): IoU \(best)")
            }
        }
    }

    @Test("--annotate writes every frame with the answers drawn, a whole file and nothing partial beside it")
    func annotate() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-stream")
        defer { folder.remove() }
        let clip = try VideoClips.faces(in: folder.url.path)
        let output = folder.path("out/annotated.mp4")
        try FileManager.default.createDirectory(atPath: folder.path("out"), withIntermediateDirectories: true)
        let run = try netrunner(["stream", clip, "--model", "face", "--annotate", output])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try VideoClips.frameCount(output) == 10)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path("out")) == ["annotated.mp4"])
        // The boxes are drawn: the annotated frame differs from the source frame around a face.
        try VideoClips.ffmpeg(["-loglevel", "error", "-i", output, "-frames:v", "1", folder.path("a.png")])
        try VideoClips.ffmpeg(["-loglevel", "error", "-i", clip, "-frames:v", "1", folder.path("s.png")])
        let annotated = try Data(contentsOf: URL(fileURLWithPath: folder.path("a.png")))
        let plain = try Data(contentsOf: URL(fileURLWithPath: folder.path("s.png")))
        #expect(annotated != plain)
    }

    @Test("--annotate with --every N writes the inferred frames at the source's timing, as docs/streams.md says")
    func annotateEvery() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-stream")
        defer { folder.remove() }
        // 20 frames at 10 fps: --every 5 infers frames 0, 5, 10 and 15; ffmpeg never sends the others.
        let clip = try VideoClips.faces(in: folder.url.path, seconds: 2)
        let output = folder.path("every.mp4")
        let run = try netrunner(["stream", clip, "--model", "face", "--every", "5", "--annotate", output])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try VideoClips.frameCount(output) == 4)
        let probe = try ProcessResult.run(
            "/usr/bin/env",
            [
                "ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                "stream=r_frame_rate:format=duration",
                "-of", "default=noprint_wrappers=1", output,
            ])
        #expect(probe.status == 0, "\(probe.stderr)")
        let fields = Dictionary(
            probe.stdout.split(separator: "\n").compactMap { line -> (String, String)? in
                let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
                return parts.count == 2 ? (parts[0], parts[1]) : nil
            }, uniquingKeysWith: { first, _ in first })
        #expect(fields["r_frame_rate"] == "2/1", "\(probe.stdout)")
        let duration = try #require(fields["duration"].flatMap(Double.init), "\(probe.stdout)")
        #expect(abs(duration - 2) < 0.1, "the source's 2 s, found \(duration)")
        let docs = try String(contentsOfFile: Fixtures.path("docs/streams.md"), encoding: .utf8)
            .replacingOccurrences(of: "\n  ", with: " ")
        #expect(docs.contains("with `--every 5` gives 4 frames at 2 fps, 2 s long"))
    }

    @Test("The --json summary's numbers have at most 3 decimals (seconds, milliseconds) and 1 (frames per second)")
    func summaryDecimals() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-stream")
        defer { folder.remove() }
        let clip = try VideoClips.faces(in: folder.url.path)
        let run = try netrunner(["stream", clip, "--model", "face", "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let line = try #require(run.stderr.split(separator: "\n").last { $0.hasPrefix("{\"summary\"") })
        let totals = try summary(run.stderr)
        #expect((totals["inference_ms"] as? [String: Any])?["mean"] != nil, "\(line)")
        // Every number as written, with the key before it.
        let number = try NSRegularExpression(pattern: "\"([a-z_0-9]+)\":(-?[0-9]+(?:\\.([0-9]+))?(?:[eE][-+]?[0-9]+)?)")
        let text = String(line)
        var seen = 0
        for match in number.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            let key = String(text[Range(match.range(at: 1), in: text)!])
            let value = String(text[Range(match.range(at: 2), in: text)!])
            let decimals = Range(match.range(at: 3), in: text).map { text[$0].count } ?? 0
            #expect(!value.contains("e") && !value.contains("E"), "\(key): \(value)")
            #expect(decimals <= (key.hasSuffix("_fps") ? 1 : 3), "\(key): \(value)")
            seen += 1
        }
        #expect(seen >= 20, "\(line)")
    }

    @Test("Ctrl-C stops a stream at once and still leaves a whole annotated video, exit 130")
    func interrupted() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-stream")
        defer { folder.remove() }
        let clip = try VideoClips.faces(in: folder.url.path, seconds: 20)
        let output = folder.path("out/live.mp4")
        try FileManager.default.createDirectory(atPath: folder.path("out"), withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixtures.netrunner)
        process.arguments = ["stream", clip, "--model", "face", "--realtime", "--annotate", output, "--json"]
        // Interrupted once 10 frames are answered, however slowly the machine started it.
        let answered = Pipe()
        let lines = Mutex(0)
        process.standardOutput = answered
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        _ = PipeReader(answered.fileHandleForReading) { chunk in
            lines.withLock { $0 += chunk.count { $0 == UInt8(ascii: "\n") } }
        }
        let deadline = Date() + 60
        while process.isRunning, Date() < deadline, lines.withLock({ $0 }) < 10 { usleep(20_000) }
        let stopped = Date()
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        #expect(Date().timeIntervalSince(stopped) < 5)
        #expect(process.terminationStatus == 130)
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(stderr.contains("received"), "\(stderr)")
        // About a second of the 20 s clip, readable to its end; nothing partial left beside it.
        let frames = try VideoClips.frameCount(output)
        #expect(frames > 5 && frames < 100, "\(frames) frames")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path("out")) == ["live.mp4"])
    }

    @Test(
        "Live mode on a loopback HTTP stream: the interval drops frames, a disconnect is reconnected, numbers and timestamps keep increasing"
    )
    func liveReconnect() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-stream")
        defer { folder.remove() }
        let clip = try VideoClips.faces(in: folder.url.path, seconds: 2)
        let server = try LiveVideoServer(clip: clip, port: LiveVideoServer.freePort())
        defer { server.stop() }
        let stream = try WatchedProcess(
            Fixtures.netrunner,
            [
                "stream", server.url, "--model", "face", "--interval", "250", "--reconnect", "6", "--max-frames", "70",
                "--json",
            ])
        // Frames answered (however slowly the machine started the stream), then the connection
        // dropped; served again once the stream has seen the drop.
        try Eventually.waitBlocking(for: "3 answered frames") { stream.stdoutLines >= 3 || !stream.process.isRunning }
        server.stop()
        try Eventually.waitBlocking(for: "the stream to see the drop") {
            stream.stderr.contains("reconnecting in") || !stream.process.isRunning
        }
        try server.start()
        let run = try stream.finish()
        #expect(run.status == 0, "\(run.stderr)")
        let frames = try lines(run.stdout)
        let totals = try summary(run.stderr)
        #expect((totals["reconnections"] as? Int ?? 0) >= 1, "\(totals)")
        #expect(totals["mode"] as? String == "live")
        let received = totals["received"] as? Int ?? 0
        let inferred = totals["inferred"] as? Int ?? 0
        let droppedInterval = totals["dropped_by_interval"] as? Int ?? 0
        let droppedBusy = totals["dropped_while_busy"] as? Int ?? 0
        #expect(received == 70)
        #expect(inferred == frames.count && inferred + droppedInterval + droppedBusy == received)
        #expect(droppedInterval > 0)
        let numbers = frames.compactMap { $0["frame"] as? Int }
        let times = frames.compactMap { $0["timestamp_ms"] as? Double }
        #expect(numbers == numbers.sorted() && Set(numbers).count == numbers.count)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 })
        for frame in frames { #expect(try boxes(frame).count == 2) }
    }

    @Test("Live mode with stdout read slowly: every answer inferred is printed; frames held back meanwhile are counted")
    func slowReader() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-stream")
        defer { folder.remove() }
        // The two portraits, 8 s at 50 frames per second, delivered as a camera would: the model
        // answers nearly every one of the 400 frames, far more than the reader takes.
        let clip = folder.path("faces50.mp4")
        try VideoClips.ffmpeg([
            "-hide_banner", "-loglevel", "error", "-y", "-loop", "1", "-framerate", "50", "-t", "8", "-i",
            Fixtures.path("Tests/Fixtures/Photos/faces/two_portraits.jpg"), "-c:v", "libx264", "-pix_fmt", "yuv420p",
            clip,
        ])
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixtures.netrunner)
        process.arguments = ["stream", clip, "--model", "face", "--mode", "live", "--realtime", "--json"]
        let output = Pipe()
        // A small pipe (4 KiB, F_SETPIPE_SZ), so that the slow reader is felt at once.
        _ = fcntl(output.fileHandleForWriting.fileDescriptor, 1031, 4096)
        process.standardOutput = output
        let errors = Pipe()
        process.standardError = errors
        nonisolated(unsafe) var errorData = Data()
        let errorsRead = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            errorData = errors.fileHandleForReading.readDataToEndOfFile()
            errorsRead.signal()
        }
        try process.run()
        // 512 bytes every 50 ms (about one answer line): far slower than the model answers.
        var data = Data()
        while let chunk = try output.fileHandleForReading.read(upToCount: 512), !chunk.isEmpty {
            data.append(chunk)
            usleep(50_000)
        }
        process.waitUntilExit()
        errorsRead.wait()
        let stderr = String(decoding: errorData, as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(stderr)")
        let printed = try lines(String(decoding: data, as: UTF8.self)).count
        let totals = try summary(stderr)
        let inferred = totals["inferred"] as? Int ?? -1
        let heldBack = totals["dropped_while_output_behind"] as? Int ?? -1
        let notPrinted = totals["not_printed"] as? Int ?? -1
        #expect(inferred == printed + notPrinted && notPrinted == 0, "printed \(printed): \(totals)")
        #expect(heldBack > 0, "\(totals)")
        let received = totals["received"] as? Int ?? 0
        let busy = totals["dropped_while_busy"] as? Int ?? 0
        let interval = totals["dropped_by_interval"] as? Int ?? 0
        #expect(received > 300 && received == inferred + busy + interval + heldBack, "\(totals)")
    }

    func boxes(_ line: [String: Any]) throws -> [[Double]] {
        let results = try #require(line["inference_results"] as? [String: Any])
        let detections = try #require(results["detection"] as? [[String: Any]])
        return try detections.map { try #require($0["box"] as? [Double]) }
    }

    /// IoU of two [x, y, width, height] boxes.
    func iou(_ a: [Double], _ b: [Double]) -> Double {
        let x1 = max(a[0], b[0])
        let y1 = max(a[1], b[1])
        let x2 = min(a[0] + a[2], b[0] + b[2])
        let y2 = min(a[1] + a[3], b[1] + b[3])
        let overlap = max(0, x2 - x1) * max(0, y2 - y1)
        return overlap / (a[2] * a[3] + b[2] * b[3] - overlap)
    }
}

/// What the stream suites share: the tool run as a child process, and its JSON lines.
protocol StreamCommandRunning {}

extension StreamCommandRunning {
    func netrunner(_ arguments: [String], environment: [String: String?] = [:]) throws -> ProcessResult {
        try ProcessResult.run(Fixtures.netrunner, arguments, environment: environment)
    }

    func lines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }
}
