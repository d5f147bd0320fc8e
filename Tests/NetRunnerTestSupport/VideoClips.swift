import Foundation

/// Test videos made at test time by Debian's ffmpeg from the committed photos (nothing binary
/// is committed for them).
public enum VideoClips {
    /// The photos of ``photos(in:)``, in order; each is held for ``framesPerPhoto`` frames.
    public static let photoOrder = ["coffee.jpg", "eagle.jpg", "chelsea.png", "grace_hopper.jpg"]
    /// Frames per photo in ``photos(in:)``.
    public static let framesPerPhoto = 8
    /// The frame rate of the clips.
    public static let framesPerSecond = 8

    /// A 320x320 H.264 clip: the centre square of each test photo, held for 8 frames at 8 fps
    /// (32 frames). A classifier's centre crop of a frame is then the photo's own centre crop.
    public static func photos(in folder: String) throws -> String {
        let path = folder + "/photos.mp4"
        var arguments = ["-hide_banner", "-loglevel", "error", "-y"]
        for name in photoOrder {
            arguments += [
                "-loop", "1", "-framerate", "\(framesPerSecond)", "-t", "1", "-i",
                Fixtures.path("Tests/Fixtures/Photos/test/" + name),
            ]
        }
        let crops = (0..<photoOrder.count).map {
            "[\($0)]crop='min(iw,ih)':'min(iw,ih)',scale=320:320,setsar=1,format=yuv420p[v\($0)]"
        }
        let inputs = (0..<photoOrder.count).map { "[v\($0)]" }.joined()
        arguments += [
            "-filter_complex", crops.joined(separator: ";") + ";\(inputs)concat=n=\(photoOrder.count):v=1[v]",
            "-map", "[v]", "-c:v", "libx264", "-crf", "12", "-pix_fmt", "yuv420p", path,
        ]
        try ffmpeg(arguments)
        return path
    }

    /// A 640x400 clip of the two-portraits photo at its own size, `seconds` long at 10 fps.
    public static func faces(in folder: String, seconds: Int = 1) throws -> String {
        let path = folder + "/faces.mp4"
        try ffmpeg([
            "-hide_banner", "-loglevel", "error", "-y", "-loop", "1", "-framerate", "10", "-t", "\(seconds)", "-i",
            Fixtures.path("Tests/Fixtures/Photos/faces/two_portraits.jpg"), "-c:v", "libx264", "-crf", "12",
            "-pix_fmt", "yuv420p", path,
        ])
        return path
    }

    /// Runs ffmpeg; throws with its stderr when it fails.
    public static func ffmpeg(_ arguments: [String]) throws {
        let result = try ProcessResult.run("/usr/bin/env", ["ffmpeg"] + arguments)
        guard result.status == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "ffmpeg: \(result.stderr)"])
        }
    }

    /// The number of video frames in a file, counted by ffprobe.
    public static func frameCount(_ path: String) throws -> Int {
        let result = try ProcessResult.run(
            "/usr/bin/env",
            [
                "ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                "stream=nb_read_frames", "-of", "csv=p=0", path,
            ])
        return Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }
}

/// A live HTTP source on loopback: ffmpeg reading a clip at its own rate, in a loop, and serving
/// it as MPEG-TS to one client at a time (`-listen 1`).
public final class LiveVideoServer: @unchecked Sendable {
    private var process: Process?
    private let clip: String
    /// The port.
    public let port: Int

    /// Starts serving `clip` (looped) on `port`.
    public init(clip: String, port: Int) throws {
        self.clip = clip
        self.port = port
        try start()
    }

    /// The stream's URL.
    public var url: String { "http://127.0.0.1:\(port)/live.ts" }

    /// Starts (again) after ``stop()``; returns once ffmpeg listens.
    public func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "ffmpeg", "-hide_banner", "-loglevel", "quiet", "-nostdin", "-re", "-stream_loop", "-1", "-i", clip,
            "-c", "copy", "-f", "mpegts", "-listen", "1", url,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        try Loopback.waitUntilListening(port)
    }

    /// Kills the server (the client sees the connection drop).
    public func stop() {
        guard let process else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }

    /// A free loopback port.
    public static func freePort() -> Int {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
