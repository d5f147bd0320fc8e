import NetRunnerImage
import NetRunnerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The arguments of the ffmpeg child that decodes a source into raw RGB frames on its stdout.
///
/// The filter chain: `[fps=F,]showinfo,[select=every N,]scale,format=rgb24,showinfo`. The first
/// `showinfo` logs every decoded frame (its number, presentation time and size), the second each
/// frame that is sent (its size after scaling); ``FFmpegLog`` pairs them with the bytes.
struct FFmpegCommand {
    /// The index of the first `showinfo` in the chain (it names itself `Parsed_showinfo_<index>`).
    let decodedFilterIndex: Int
    /// The index of the second `showinfo`.
    let sentFilterIndex: Int
    /// The arguments, without the program.
    let arguments: [String]

    init(source: VideoSource, options: FrameSource.Options) {
        // Decoding threads: one core is left for the model (measured on 2 cores: 1 decoding thread
        // beside inference beats ffmpeg's default of one per core plus one).
        let cores = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        var arguments = ["-hide_banner", "-nostats", "-loglevel", "level+info", "-threads", String(max(1, cores - 1))]
        if source.kind != .standardInput { arguments.append("-nostdin") }
        let timeout = String(Int(options.stallTimeout.inMilliseconds * 1000))
        if let whitelist = source.protocolWhitelist { arguments += ["-protocol_whitelist", whitelist] }
        switch source.kind {
        case .file:
            if options.readsAtNativeRate { arguments.append("-re") }
            arguments += ["-fflags", "+genpts+discardcorrupt", "-i", "file:" + source.location]
        case .standardInput:
            if options.readsAtNativeRate { arguments.append("-re") }
            arguments += ["-fflags", "+genpts+discardcorrupt", "-i", "pipe:0"]
        case .device:
            #if os(Linux)
                arguments += ["-f", "v4l2"]
            #endif
            arguments += ["-fflags", "+genpts+discardcorrupt+nobuffer", "-i", source.location]
        case .url:
            if options.readsAtNativeRate { arguments.append("-re") }
            arguments += ["-fflags", "+genpts+discardcorrupt"]
            if source.isLive {
                // The first frame soon: ffmpeg's default probing reads 5 s of a live stream before
                // the first frame (an MPEG-TS over HTTP: 5.3 s), and +nobuffer then threw the probed
                // packets away, so decoding waited for the next keyframe too (6.4 s in all). Half a
                // second of probing, its packets kept, gives the first frame in under a second;
                // live mode's latest-frame-wins drops the few older frames it holds.
                arguments += ["-probesize", "500000", "-analyzeduration", "500000", "-flags", "low_delay"]
            }
            switch source.scheme {
            case "rtsp", "rtsps": arguments += ["-rtsp_transport", "tcp", "-timeout", timeout]
            default: arguments += ["-rw_timeout", timeout]
            }
            arguments += ["-i", source.location]
        }
        var filters: [String] = []
        if let fps = options.framesPerSecond { filters.append("fps=\(fps)") }
        decodedFilterIndex = filters.count
        filters.append("showinfo=checksum=0")
        if options.everyNthFrame > 1 { filters.append("select='not(mod(n\\,\(options.everyNthFrame)))'") }
        switch options.frameSize {
        case .original: break
        case .covering(let size):
            filters.append(
                "scale=w=\(size.width):h=\(size.height):force_original_aspect_ratio=increase:flags=area")
            filters.append("setsar=1")
        case .fitting(let size):
            filters.append(
                "scale=w='min(iw\\,\(size.width))':h='min(ih\\,\(size.height))':force_original_aspect_ratio=decrease:flags=bilinear"
            )
            filters.append("setsar=1")
        }
        filters.append("format=rgb24")
        sentFilterIndex = filters.count
        filters.append("showinfo=checksum=0")
        arguments += [
            "-map", "0:v:0", "-an", "-sn", "-dn", "-vf", filters.joined(separator: ","),
            "-fps_mode", "passthrough", "-pix_fmt", "rgb24", "-f", "rawvideo", "pipe:1",
        ]
        self.arguments = arguments
    }
}
