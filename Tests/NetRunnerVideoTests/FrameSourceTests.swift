import Foundation
import NetRunner
import NetRunnerImage
import NetRunnerTestSupport
import Synchronization
import Testing

@testable import NetRunnerVideo

/// The frame source and the video and live-stream modes, through the library's API.
@Suite("Frame sources and running modes", .serialized)
struct FrameSourceTests {
    @Test("A file's frames: scaled in ffmpeg to cover the model's input, source size kept, timestamps from the stream")
    func fileFrames() async throws {
        let folder = try TemporaryFolder(prefix: "netrunner-video")
        defer { folder.remove() }
        let clip = try VideoClips.photos(in: folder.url.path)
        var options = FrameSource.Options(frameSize: .covering(PixelSize(width: 224, height: 160)))
        options.everyNthFrame = 3
        let source = FrameSource(VideoSource(clip), options: options)
        var frames: [VideoFrame] = []
        for try await frame in source { frames.append(frame) }
        #expect(frames.map(\.index) == Array(stride(from: 0, to: 32, by: 3)))
        #expect(frames.map(\.timestampMilliseconds) == frames.map { Double($0.index) * 125 })
        #expect(
            frames.allSatisfy { $0.pixels.size == PixelSize(width: 224, height: 224) && $0.pixels.format == .rgb24 })
        #expect(frames.allSatisfy { $0.sourceSize == PixelSize(width: 320, height: 320) })
        let statistics = source.statistics
        #expect(statistics.decoded == 32 && statistics.received == 11 && statistics.skippedByEvery == 21)
    }

    @Test("Two streams share one interpreter: video mode answers every frame, live mode accounts for every frame")
    func sharedPool() async throws {
        let folder = try TemporaryFolder(prefix: "netrunner-video")
        defer { folder.remove() }
        let clip = try VideoClips.faces(in: folder.url.path, seconds: 2)
        let model = Fixtures.path("Models/bundles/face_detection_short_range.tiobundle")
        let pool = try VisionTaskPool(count: 1) { try ImageTask(modelAt: model) }
        #expect(pool.kind == .detection)
        let video = StreamRunner(pool: pool, mode: .video)
        let live = StreamRunner(pool: pool, mode: .liveStream(minimumInterval: .milliseconds(150)))
        var liveOptions = FrameSource.Options(frameSize: .covering(pool.preprocessing.size))
        liveOptions.readsAtNativeRate = true
        let videoFrames = FrameSource(VideoSource(clip), options: .init(frameSize: .covering(pool.preprocessing.size)))
        let liveFrames = FrameSource(VideoSource(clip), options: liveOptions)
        async let videoEvents = Self.collect(video.events(for: videoFrames))
        async let liveEvents = Self.collect(live.events(for: liveFrames))
        let (fromVideo, fromLive) = try await (videoEvents, liveEvents)

        let answered = fromVideo.compactMap { event -> FrameAnswer? in
            if case .answered(let answer) = event { return answer }
            return nil
        }
        #expect(answered.map(\.frame.index) == Array(0..<20))
        for answer in answered {
            guard case .detection(let result) = answer.answer else {
                Issue.record("not a detection")
                continue
            }
            #expect(result.detections.count == 2 && result.imageWidth == 640 && result.imageHeight == 400)
        }
        let statistics = live.statistics
        #expect(statistics.received == 20)
        #expect(statistics.inferred + statistics.droppedWhileBusy + statistics.droppedByInterval == 20)
        // How many run depends on the machine's load (a busy shared pool drops frames as
        // "busy"); what holds everywhere: frames 100 ms apart with a 150 ms interval cannot all run.
        #expect(statistics.inferred >= 1 && statistics.droppedByInterval + statistics.droppedWhileBusy > 0)
        #expect(fromLive.count == 20)
        let liveAnswers = fromLive.compactMap { event -> Double? in
            if case .answered(let answer) = event { return answer.frame.timestampMilliseconds }
            return nil
        }
        #expect(liveAnswers == liveAnswers.sorted())
    }

    static func collect(_ events: StreamEvents) async throws -> [StreamEvent] {
        var all: [StreamEvent] = []
        for try await event in events { all.append(event) }
        return all
    }

    @Test("Video mode waits for a slow reader: the source is read only a few frames ahead of it")
    func backPressure() async throws {
        let model = Fixtures.path("Models/bundles/face_detection_short_range.tiobundle")
        let pool = try VisionTaskPool(count: 1) { try ImageTask(modelAt: model) }
        let frames = CountedFrames(count: 1000)
        var read = 0
        for try await _ in StreamRunner(pool: pool, mode: .video).events(for: frames) {
            read += 1
            try await Task.sleep(for: .milliseconds(20))
            if read == 10 { break }
        }
        // Ten read, at most videoReadAhead more made; never the thousand a free-running producer makes.
        let pulled = frames.pulled
        #expect(pulled >= 10 && pulled <= 10 + StreamEvents.videoReadAhead + 1, "\(pulled) frames pulled")
    }

    @Test("Bad presentation times are replaced by increasing ones and counted; never an error")
    func timestampRepair() {
        var timing = Timestamps(live: false, start: .now)
        let given: [Double?] = [0, 0.04, 0.04, 0.02, nil, 0.2]
        var repairs = 0
        var values: [Double] = []
        for time in given {
            let (value, repaired) = timing.next(presentationTime: time, receivedAt: .now)
            values.append(value)
            if repaired { repairs += 1 }
        }
        #expect(values == [0, 40, 80, 120, 160, 200])
        #expect(repairs == 3)
    }

    @Test("ffmpeg's log: frame lines paired in order, every Nth frame, errors kept for the message")
    func logPairing() {
        let command = FFmpegCommand(source: VideoSource("a.mp4"), options: FrameSource.Options())
        var log = FFmpegLog(command: command, everyNthFrame: 2)
        let first = "[Parsed_showinfo_\(command.decodedFilterIndex) @ 0x1] [info] n:"
        let second = "[Parsed_showinfo_\(command.sentFilterIndex) @ 0x2] [info] n:"
        #expect(
            log.read("\(first)   0 pts:      0 pts_time:0       pos: 1 fmt:yuv420p sar:1/1 s:640x480 i:P")
                == .decoded(number: 0))
        #expect(
            log.read("\(first)   1 pts:    512 pts_time:0.04    pos: 1 fmt:yuv420p sar:1/1 s:640x480 i:P")
                == .decoded(number: 1))
        #expect(
            log.read("\(second)   0 pts:      0 pts_time:0 pos: -1 fmt:rgb24 sar:1/1 s:171x128 i:P")
                == .frame(
                    .init(
                        number: 0, presentationTime: 0, sourceSize: PixelSize(width: 640, height: 480),
                        size: PixelSize(width: 171, height: 128))))
        #expect(log.read("\(first) garbage s:0x0") == .other)
        #expect(log.read("[h264 @ 0x3] [error] corrupt macroblock 3 5") == .other)
        #expect(log.read("[info] Stream mapping:") == .other)
        #expect(log.explanation == "corrupt macroblock 3 5")
    }

    @Test("Sources by name: files, URLs (a video file's URL is not live), devices, stdin; passwords hidden")
    func sources() {
        #expect(VideoSource("clip.mp4").kind == .file && !VideoSource("clip.mp4").isLive)
        #expect(VideoSource("-").kind == .standardInput)
        #expect(VideoSource("/dev/video0").kind == .device && VideoSource("/dev/video0").isLive)
        #expect(VideoSource("rtsp://cam/stream").isLive)
        #expect(!VideoSource("https://host/clip.MP4?x=1").isLive)
        #expect(VideoSource("rtsp://admin:secret@cam:554/s").description == "rtsp://***@cam:554/s")
    }

    @Test("Only the protocols the help lists are read; ffmpeg is held to the source's own protocols")
    func protocols() async throws {
        for text in ["clip.mp4", "-", "/dev/video0", "file:clip.mp4", "concat:a.ts|b.ts"]
            + VideoSource.allowedSchemes.map({ "\($0)://host/x" }) + ["HTTP://host/x", "RTSP://u:p@cam/s"]
        {
            #expect(throws: Never.self, "\(text)") { try VideoSource(text).check() }
        }
        for (text, scheme) in [
            ("file:///etc/passwd", "file"),
            ("subfile,,start,0,end,0,,:file:///etc/passwd", "subfile,,start,0,end,0,,:file"),
            ("gopher://host/x", "gopher"), ("ftp://host/x.mp4", "ftp"), ("data://x", "data"),
            ("hls+file://x", "hls+file"),
            ("unix:///run/x.sock", "unix"), ("sftp://u:p@host/x", "sftp"),
        ] {
            #expect(throws: VideoError.unsupportedProtocol(source: VideoSource(text).description, scheme: scheme)) {
                try VideoSource(text).check()
            }
        }
        let refused = VideoError.unsupportedProtocol(source: "sftp://***@host/x", scheme: "sftp")
        #expect(
            refused.description
                == "sftp://***@host/x: the protocol \"sftp\" is not read; a source is a video file's path, a camera device, "
                + "- (standard input) or a URL of http, https, rtsp, rtsps, rtmp, rtmps, udp, tcp, srt.")
        // The frame source refuses it too (the server's streams read it this way).
        var frames = FrameSource(VideoSource("file:///etc/passwd")).makeAsyncIterator()
        await #expect(throws: VideoError.self) { _ = try await frames.next() }

        func whitelist(_ text: String) -> String? {
            let arguments = FFmpegCommand(source: VideoSource(text), options: FrameSource.Options()).arguments
            guard let at = arguments.firstIndex(of: "-protocol_whitelist") else { return nil }
            #expect(at < arguments.firstIndex(of: "-i")!)
            return arguments[at + 1]
        }
        #expect(whitelist("clip.mp4") == "file")
        #expect(whitelist("-") == "pipe")
        #expect(whitelist("https://host/live.m3u8") == "http,https,tcp,tls,crypto,httpproxy")
        #expect(whitelist("rtsp://cam/s") == "rtsp,rtsps,rtp,srtp,udp,tcp,tls")
        #expect(whitelist("rtmp://host/app") == "rtmp,rtmps,tcp,tls")
        #expect(whitelist("udp://0.0.0.0:1234") == "udp" && whitelist("srt://host:9000") == "srt")
        #expect(whitelist("/dev/video0") == nil)
    }

    @Test("ffmpeg's messages lose the source's password before they are kept")
    func logMasksPasswords() {
        let command = FFmpegCommand(source: VideoSource("rtsp://admin:hunter2@cam/s"), options: FrameSource.Options())
        var log = FFmpegLog(command: command, everyNthFrame: 1)
        _ = log.read("[tcp @ 0x1] [error] Connection to tcp://127.0.0.1:1?timeout=0 failed: Connection refused")
        _ = log.read("[in#0 @ 0x2] [error] rtsp://admin:hunter2@127.0.0.1:1/x: Connection refused")
        #expect(!log.explanation.contains("hunter2"))
        #expect(log.explanation.hasSuffix("rtsp://***@127.0.0.1:1/x: Connection refused"), "\(log.explanation)")
        #expect(
            VideoError.sourceFailed(source: "x", details: "rtsp://admin:hunter2@cam/s: refused").description
                == "x: ffmpeg failed: rtsp://***@cam/s: refused")
    }

    @Test("The watchdog watches URLs, devices, stdin and named pipes, not regular files (slow is not stalled)")
    func watched() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-video")
        defer { folder.remove() }
        let file = folder.path("clip.mp4")
        try Data([0]).write(to: URL(fileURLWithPath: file))
        let fifo = folder.path("pipe")
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(!VideoSource(file).canStall)
        #expect(VideoSource(fifo).kind == .file && VideoSource(fifo).canStall)
        #expect(VideoSource(folder.path("missing.mp4")).canStall)
        #expect(VideoSource("-").canStall && VideoSource("rtsp://cam/s").canStall)
        #expect(VideoSource("https://host/clip.mp4").canStall && VideoSource("/dev/video0").canStall)
    }
}

/// Frames made on demand (gray 64x64), counting how many were asked for.
final class CountedFrames: AsyncSequence, Sendable {
    typealias Element = VideoFrame
    let count: Int
    private let counter = Mutex(0)

    init(count: Int) { self.count = count }

    var pulled: Int { counter.withLock { $0 } }

    struct Iterator: AsyncIteratorProtocol {
        let frames: CountedFrames

        mutating func next() async throws -> VideoFrame? {
            let index = frames.counter.withLock { value -> Int in
                value += 1
                return value - 1
            }
            guard index < frames.count else { return nil }
            let pixels = try PixelBuffer(width: 64, height: 64, format: .rgb24)
            return VideoFrame(pixels: pixels, index: index, timestampMilliseconds: Double(index) * 40)
        }
    }

    func makeAsyncIterator() -> Iterator { Iterator(frames: self) }
}
