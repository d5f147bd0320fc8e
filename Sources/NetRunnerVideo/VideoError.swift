import NetRunnerSupport

/// Why a video source or an annotated video failed.
///
/// Each message names the source.
public enum VideoError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The ffmpeg program was not found.
    case ffmpegMissing(String)
    /// The file does not exist or cannot be read.
    case unreadable(source: String, reason: String)
    /// The source has no video stream (an audio file, say).
    case noVideoStream(source: String)
    /// The source holds no decodable frame.
    case noFrames(source: String, details: String)
    /// The source's frames are larger than the limit.
    case frameTooLarge(source: String, width: Int, height: Int, limit: Int)
    /// No frame arrived for too long.
    case stalled(source: String, seconds: Double)
    /// ffmpeg stopped with an error (its last lines of output in `details`).
    case sourceFailed(source: String, details: String)
    /// A live source could not be reconnected.
    case reconnectionFailed(source: String, attempts: Int, details: String)
    /// The encoder of an annotated video failed.
    case writerFailed(path: String, details: String)
    /// A URL of a protocol that is not read (only ``VideoSource/allowedSchemes`` are).
    case unsupportedProtocol(source: String, scheme: String)

    /// The message, naming the source (a URL's user and password masked, in ffmpeg's words too).
    public var description: String { URLCredentials.masked(message) }

    private var message: String {
        switch self {
        case .ffmpegMissing(let path):
            return
                "\(path) was not found: video needs the ffmpeg program (Debian: apt-get install ffmpeg; or set NETRUNNER_FFMPEG to its path)."
        case .unreadable(let source, let reason):
            return "\(source): \(reason)"
        case .noVideoStream(let source):
            return "\(source) has no video stream."
        case .noFrames(let source, let details):
            return "\(source) holds no video frame ffmpeg could decode" + (details.isEmpty ? "." : ": \(details)")
        case .frameTooLarge(let source, let width, let height, let limit):
            return "\(source): its frames are \(width)x\(height), over the limit of \(limit) pixels."
        case .stalled(let source, let seconds):
            return
                "\(source): no frame for \(Self.format(seconds)) s; the source stalled (the watchdog stopped ffmpeg)."
        case .sourceFailed(let source, let details):
            return "\(source): ffmpeg failed" + (details.isEmpty ? "." : ": \(details)")
        case .reconnectionFailed(let source, let attempts, let details):
            return "\(source): gave up after \(attempts) attempts to reconnect"
                + (details.isEmpty ? "." : "; last error: \(details)")
        case .writerFailed(let path, let details):
            return "\(path): the video encoder failed" + (details.isEmpty ? "." : ": \(details)")
        case .unsupportedProtocol(let source, let scheme):
            return "\(source): the protocol \"\(scheme)\" is not read; a source is a video file's path, a camera "
                + "device, - (standard input) or a URL of "
                + VideoSource.allowedSchemes.joined(separator: ", ") + "."
        }
    }

    private static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}
