public import NetRunnerImage
import NetRunnerSupport
import Subprocess
import Synchronization

#if canImport(System)
    import System
#else
    import SystemPackage
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes frames to a video file through an ffmpeg encoder child (H.264 in `.mp4`, `.mkv`,
/// `.mov`; ffmpeg's choice for other extensions).
///
/// The video is encoded into a hidden file beside `path` and renamed over it by ``finish()``,
/// so `path` is either absent or a whole, playable video, even when the run is stopped (finish
/// it on Ctrl-C) or ffmpeg fails. Frames of another size than the first are resized to it.
///
///     let writer = try VideoWriter(path: "out.mp4", size: first.size, framesPerSecond: 25)
///     try await writer.write(first)
///     try await writer.finish()
public final class VideoWriter: Sendable {
    /// The file written.
    public let path: String
    /// The size of every frame in the video.
    public let size: PixelSize
    private let partialPath: String
    private let frames: FrameChannel<PixelBuffer>
    private let encoder: Task<Void, any Error>
    private let finished = Atomic<Bool>(false)

    /// Starts the encoder.
    ///
    /// - Parameters:
    ///   - path: The video file to write (its extension picks the container).
    ///   - size: The frame size.
    ///   - framesPerSecond: The video's frame rate.
    ///   - ffmpeg: The ffmpeg program (default: as ``FrameSource/Options/ffmpeg``).
    /// - Throws: ``VideoError/writerFailed(path:details:)`` when the folder cannot be written.
    public init(path: String, size: PixelSize, framesPerSecond: Double, ffmpeg: String = FrameSource.defaultFFmpeg)
        throws
    {
        self.path = path
        self.size = size
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let dot = name.lastIndex(of: ".")
        let fileExtension = dot.map { String(name[name.index(after: $0)...]).lowercased() } ?? ""
        partialPath =
            (folder.isEmpty ? "" : folder + "/") + "." + (dot.map { String(name[..<$0]) } ?? name)
            + ".partial-\(getpid())" + (fileExtension.isEmpty ? "" : "." + fileExtension)
        guard access(folder.isEmpty ? "/" : folder, W_OK) == 0 else {
            throw VideoError.writerFailed(path: path, details: "its folder cannot be written")
        }
        var arguments = [
            "-hide_banner", "-nostats", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24",
            "-s", "\(size.width)x\(size.height)", "-framerate", String(min(max(framesPerSecond, 1), 240)), "-i",
            "pipe:0", "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2",
        ]
        if ["mp4", "mkv", "mov", "m4v", ""].contains(fileExtension) {
            arguments += ["-c:v", "libx264", "-preset", "veryfast", "-crf", "20"]
        }
        arguments += ["-pix_fmt", "yuv420p"]
        if fileExtension.isEmpty { arguments += ["-f", "mp4"] }
        arguments.append("file:" + partialPath)
        let frames = FrameChannel<PixelBuffer>(capacity: 4)
        self.frames = frames
        let executable: Executable = ffmpeg.contains("/") ? .path(FilePath(ffmpeg)) : .name(ffmpeg)
        let target = path
        let partial = partialPath
        var platform = PlatformOptions()
        platform.processGroupID = 0
        encoder = Task {
            do {
                let result = try await Subprocess.run(
                    executable, arguments: Arguments(arguments), platformOptions: platform, input: .inputWriter,
                    output: .discarded, error: .string(limit: 16_384)
                ) { execution in
                    let writer = execution.standardInputWriter
                    while let frame = try await frames.next() {
                        do {
                            _ = try await writer.write(frame.packedBytes)
                        } catch {
                            frames.close()
                            break
                        }
                    }
                    try? await writer.finish()
                }
                guard result.terminationStatus == .exited(0) else {
                    unlink(partial)
                    let details = result.standardError.split(separator: "\n").suffix(2).joined(separator: "; ")
                    throw VideoError.writerFailed(path: target, details: details)
                }
            } catch let error as SubprocessError where error.code == .executableNotFound {
                frames.close()
                throw VideoError.ffmpegMissing(ffmpeg)
            }
        }
    }

    deinit {
        if !finished.load(ordering: .relaxed) {
            frames.close()
            encoder.cancel()
        }
    }

    /// Adds a frame (RGB or any other format; resized to ``size`` if it differs).
    ///
    /// - Parameter pixels: The frame.
    /// - Throws: ``VideoError/writerFailed(path:details:)`` when the encoder has stopped.
    public func write(_ pixels: PixelBuffer) async throws {
        var frame = pixels.format == .rgb24 ? pixels : pixels.converted(to: .rgb24)
        if frame.size != size {
            var resized = try PixelBuffer(width: size.width, height: size.height, format: .rgb24)
            try ImageResizer().resize(frame, into: &resized)
            frame = resized
        }
        guard await frames.send(frame) else {
            try await finish()
            throw VideoError.writerFailed(path: path, details: "the encoder stopped")
        }
    }

    /// Ends the video: the encoder writes its last frames and the file's index, and the file is
    /// renamed to ``path``.
    ///
    /// - Throws: ``VideoError`` when the encoder failed (then ``path`` is not written).
    public func finish() async throws {
        guard !finished.exchange(true, ordering: .relaxed) else { return }
        frames.finish()
        try await encoder.value
        guard rename(partialPath, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(partialPath)
            throw VideoError.writerFailed(path: path, details: reason)
        }
    }
}
