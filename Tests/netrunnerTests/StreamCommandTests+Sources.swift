import Foundation
import NetRunnerTestSupport
import Testing

extension StreamCommandTests {
    /// `netrunner stream` (and `serve --stream`) on hostile and refused sources: clear errors
    /// bounded by the watchdog, other protocols refused, HLS under the whitelist, passwords
    /// masked. Nested in `StreamCommandTests`, whose `.serialized` it shares.
    @Suite("netrunner stream: hostile and refused sources")
    struct Sources: StreamCommandRunning {
        @Test("Hostile sources: clear errors naming the source, bounded by the watchdog, never a crash")
        func hostile() throws {
            let folder = try TemporaryFolder(prefix: "netrunner-stream")
            defer { folder.remove() }
            let clip = try VideoClips.faces(in: folder.url.path)

            let missing = try netrunner(["stream", folder.path("nothing.mp4")])
            #expect(missing.status == 1 && missing.stderr.contains("nothing.mp4: no such file"), "\(missing.stderr)")

            let text = folder.path("notes.mp4")
            try Data("not a video at all\n".utf8).write(to: URL(fileURLWithPath: text))
            let notVideo = try netrunner(["stream", text])
            #expect(
                notVideo.status == 1 && notVideo.stderr.contains("notes.mp4 holds no video frame"), "\(notVideo.stderr)"
            )

            let audio = folder.path("tone.m4a")
            try VideoClips.ffmpeg(["-loglevel", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=1", audio])
            let noVideo = try netrunner(["stream", audio])
            #expect(noVideo.status == 1 && noVideo.stderr.contains("tone.m4a has no video stream"), "\(noVideo.stderr)")

            // Truncated: the first 60% of a clip in MPEG-TS (no index needed): the frames before the cut.
            let ts = folder.path("clip.ts")
            try VideoClips.ffmpeg(["-loglevel", "error", "-i", clip, "-c", "copy", ts])
            let whole = try Data(contentsOf: URL(fileURLWithPath: ts))
            try whole.prefix(whole.count * 6 / 10).write(to: URL(fileURLWithPath: folder.path("cut.ts")))
            let truncated = try netrunner(["stream", folder.path("cut.ts"), "--model", "face", "--json"])
            #expect(truncated.status == 0, "\(truncated.stderr)")
            let kept = try lines(truncated.stdout).count
            #expect(kept > 0 && kept < 10)

            // An MP4 cut before its index: nothing to decode; a clear error.
            let mp4 = try Data(contentsOf: URL(fileURLWithPath: clip))
            try mp4.prefix(mp4.count / 2).write(to: URL(fileURLWithPath: folder.path("cut.mp4")))
            let cut = try netrunner(["stream", folder.path("cut.mp4")])
            #expect(cut.status == 1 && cut.stderr.contains("cut.mp4"), "\(cut.stderr)")

            // Nobody listening: one attempt, an error naming the URL.
            let port = LiveVideoServer.freePort()
            let started = Date()
            let refused = try netrunner(["stream", "http://127.0.0.1:\(port)/live.ts", "--reconnect", "0"])
            #expect(
                refused.status == 1 && refused.stderr.contains("http://127.0.0.1:\(port)/live.ts"), "\(refused.stderr)")
            #expect(Date().timeIntervalSince(started) < 10)

            // A server that accepts and never sends: stopped within the watchdog's bound.
            let silent = try SilentServer()
            defer { silent.stop() }
            let stallStart = Date()
            let stalled = try netrunner([
                "stream", "http://127.0.0.1:\(silent.port)/live.ts", "--watchdog", "2", "--reconnect", "0",
            ])
            #expect(stalled.status == 1, "\(stalled.stderr)")
            #expect(stalled.stderr.contains("127.0.0.1:\(silent.port)"), "\(stalled.stderr)")
            #expect(Date().timeIntervalSince(stallStart) < 15)

            // A named pipe nobody writes to is watched like a URL (a regular file is not: it only
            // decodes slowly on a busy machine).
            let fifo = folder.path("camera.fifo")
            #expect(mkfifo(fifo, 0o600) == 0)
            let fifoStart = Date()
            let fifoStalled = try netrunner(["stream", fifo, "--watchdog", "1"])
            #expect(fifoStalled.status == 1 && fifoStalled.stderr.contains("camera.fifo"), "\(fifoStalled.stderr)")
            #expect(fifoStalled.stderr.contains("stalled"), "\(fifoStalled.stderr)")
            #expect(Date().timeIntervalSince(fifoStart) < 15)

            // No ffmpeg: the message says which package to install.
            let noFFmpeg = try netrunner(["stream", clip], environment: ["NETRUNNER_FFMPEG": "/nonexistent/ffmpeg"])
            #expect(noFFmpeg.status == 1 && noFFmpeg.stderr.contains("apt-get install ffmpeg"), "\(noFFmpeg.stderr)")

            // A huge picture (12000x9000): ffmpeg scales it down before it reaches the model.
            let huge = folder.path("huge.png")
            try VideoClips.ffmpeg([
                "-loglevel", "error", "-f", "lavfi", "-i", "color=c=gray:size=12000x9000", "-frames:v", "1", huge,
            ])
            let big = try netrunner(["stream", huge, "--json"])
            let bigLines = try lines(big.stdout)
            #expect(big.status == 0 && bigLines.count == 1, "\(big.stderr)")

            // Options that contradict each other.
            let both = try netrunner(["stream", clip, "--every", "2", "--interval", "100"])
            #expect(both.status != 0 && both.stderr.contains("give one"))
        }

        @Test(
            "Sources of other protocols (file:, subfile:, gopher:...) are refused by stream and serve, naming those read"
        )
        func refusedProtocols() throws {
            let allowed = "http, https, rtsp, rtsps, rtmp, rtmps, udp, tcp, srt"
            for (source, scheme) in [
                ("file:///etc/passwd", "file"),
                ("subfile,,start,0,end,0,,:file:///etc/passwd", "subfile,,start,0,end,0,,:file"),
                ("gopher://127.0.0.1:1/x", "gopher"), ("ftp://127.0.0.1:1/x.mp4", "ftp"),
            ] {
                let run = try netrunner(["stream", source, "--reconnect", "0", "--watchdog", "2"])
                #expect(run.status == 1 && run.stdout.isEmpty, "\(source): \(run.stderr)")
                #expect(run.stderr.contains("\(source): the protocol \"\(scheme)\" is not read"), "\(run.stderr)")
                #expect(run.stderr.contains(allowed), "\(run.stderr)")
            }
            // serve refuses it at start (bounded: a server that started would run until killed).
            let serve = try ProcessResult.run(
                "/usr/bin/timeout",
                [
                    "30", Fixtures.netrunner, "serve", "--port", "0", "--models", Fixtures.path("Models/bundles"),
                    "--no-import", "--stream", "cam=file:///etc/passwd",
                ])
            #expect(serve.status != 0 && serve.status != 124, "\(serve.stderr)")
            #expect(serve.stderr.contains("file:///etc/passwd: the protocol \"file\" is not read"), "\(serve.stderr)")
        }

        @Test("An HLS playlist over HTTP is read under the whitelist; one whose segment is a local file: is refused")
        func hlsPlaylists() throws {
            let folder = try TemporaryFolder(prefix: "netrunner-stream")
            defer { folder.remove() }
            let site = folder.path("site")
            try FileManager.default.createDirectory(atPath: site, withIntermediateDirectories: true)
            let clip = try VideoClips.faces(in: folder.url.path)
            try VideoClips.ffmpeg(["-loglevel", "error", "-i", clip, "-c", "copy", site + "/clip.ts"])
            func playlist(_ segment: String) -> Data {
                Data(
                    """
                    #EXTM3U
                    #EXT-X-VERSION:3
                    #EXT-X-TARGETDURATION:1
                    #EXT-X-MEDIA-SEQUENCE:0
                    #EXTINF:1.0,
                    \(segment)
                    #EXT-X-ENDLIST

                    """.utf8)
            }
            // Named .mp4, so read in video mode (ffmpeg finds the playlist by its content; a live
            // URL's +nobuffer makes ffmpeg 5.1 read no frame of an HLS playlist).
            try playlist("clip.ts").write(to: URL(fileURLWithPath: site + "/good.mp4"))
            try playlist("file://" + site + "/clip.ts").write(to: URL(fileURLWithPath: site + "/local.mp4"))
            let server = try FileServer(folder: site)
            defer { server.stop() }
            let good = try netrunner([
                "stream", server.url("good.mp4"), "--model", "face", "--reconnect", "0", "--json",
            ])
            let goodLines = try lines(good.stdout)
            #expect(good.status == 0 && goodLines.count == 10, "\(good.stderr)")
            let local = try netrunner([
                "stream", server.url("local.mp4"), "--model", "face", "--reconnect", "0", "--json",
            ])
            #expect(local.status == 1 && local.stdout.isEmpty, "\(local.stderr)")
            #expect(local.stderr.contains("Error when loading first segment"), "\(local.stderr)")
        }

        @Test("A source's password reaches neither stream's messages nor serve's log and stream status")
        func passwordsMasked() async throws {
            for source in ["rtsp://admin:hunter2@127.0.0.1:1/x", "http://admin:hunter2@127.0.0.1:1/live.ts"] {
                for extra in [[], ["--json"]] {
                    let run = try netrunner(["stream", source, "--reconnect", "0"] + extra)
                    #expect(run.status == 1)
                    #expect(
                        !run.stderr.contains("hunter2") && run.stderr.contains("://***@127.0.0.1:1/"), "\(run.stderr)")
                    #expect(run.stderr.contains("Connection refused"), "\(run.stderr)")
                }
            }
            let server = try await ServerProcess([
                "--threads", "1", "--stream", "cam=rtsp://admin:hunter2@127.0.0.1:1/x",
            ])
            defer { server.expectCleanStop() }
            let deadline = Date() + 30
            while Date() < deadline, !server.log.contains("Connection refused") {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(server.log.contains("Connection refused"), "\(server.log)")
            #expect(!server.log.contains("hunter2"), "\(server.log)")
            let status = try await server.request("/v1/streams")
            let text = String(decoding: status.body, as: UTF8.self)
            #expect(
                status.status == 200 && text.contains("rtsp://***@127.0.0.1:1/x") && !text.contains("hunter2"),
                "\(text)")
        }
    }
}

/// A TCP server on loopback that accepts connections and never answers: a stalled source.
final class SilentServer: @unchecked Sendable {
    let port: Int
    private let process = Process()

    init() throws {
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c",
            """
            import socket, sys, time
            s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
            print(s.getsockname()[1], flush=True)
            kept = []
            while True:
                c, _ = s.accept(); kept.append(c)
            """,
        ]
        process.standardOutput = output
        try process.run()
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
