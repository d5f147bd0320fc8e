import NetRunnerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where frames come from: a video file, a URL, a camera device or standard input.
///
///     VideoSource("clip.mp4")                   // a file: every frame, timestamps from the stream
///     VideoSource("rtsp://camera/stream")       // live: a monotonic clock, reconnected when it drops
///     VideoSource("/dev/video0")                // a V4L2 webcam
///     VideoSource("-")                          // standard input (any container ffmpeg reads)
public struct VideoSource: Sendable, Hashable, CustomStringConvertible {
    /// What kind of source it is.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A file on disk.
        case file
        /// A network URL: http(s), rtsp(s), rtmp(s), udp, tcp, srt (``VideoSource/allowedSchemes``).
        case url
        /// A V4L2 capture device (`/dev/video*`).
        case device
        /// The process's standard input.
        case standardInput
    }

    /// The path, URL or device, as given.
    public var location: String
    /// The kind.
    public var kind: Kind

    /// The URL schemes read (ffmpeg's other protocols, `file:`, `subfile:`, `concat:`, `data:`
    /// and the like, are refused: a file is named by its path).
    public static let allowedSchemes = ["http", "https", "rtsp", "rtsps", "rtmp", "rtmps", "udp", "tcp", "srt"]

    /// Reads a source as the command line names it: `-` is standard input, `/dev/video*` (or any
    /// character device) a camera, `scheme://...` a URL, anything else a file.
    ///
    /// ``check()`` says whether it is one that is read.
    ///
    /// - Parameter text: The path, URL or device.
    public init(_ text: String) {
        location = text
        if text == "-" {
            kind = .standardInput
        } else if text.contains("://") {
            kind = .url
        } else if text.hasPrefix("/dev/video") || Self.isCharacterDevice(text) {
            kind = .device
        } else {
            kind = .file
        }
    }

    /// Creates a source of a given kind.
    ///
    /// - Parameters:
    ///   - location: The path, URL or device.
    ///   - kind: Its kind.
    public init(location: String, kind: Kind) {
        self.location = location
        self.kind = kind
    }

    /// Whether the source runs in real time (a camera, a live URL), so that frames keep coming
    /// whether or not they are read: live mode is its default, it is reconnected when it drops, and
    /// its timestamps come from a monotonic clock.
    ///
    /// A URL whose path ends in a video file's extension (`.mp4`, `.mkv`, `.webm`, `.mov`,
    /// `.avi`, `.m4v`) is read as a file.
    public var isLive: Bool {
        switch kind {
        case .file, .standardInput: return false
        case .device: return true
        case .url:
            var path = Substring(location)
            if let query = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<query] }
            let lower = path.lowercased()
            return ![".mp4", ".mkv", ".webm", ".mov", ".avi", ".m4v"].contains { lower.hasSuffix($0) }
        }
    }

    /// The URL's scheme in lower case (`rtsp`, `http`...), or `nil` for other kinds.
    public var scheme: String? {
        guard kind == .url, let end = location.firstRange(of: "://") else { return nil }
        return location[..<end.lowerBound].lowercased()
    }

    /// The location, with a URL's user and password replaced by `***` (for messages and logs).
    public var description: String {
        kind == .url ? URLCredentials.masked(location) : location
    }

    /// Checks that the source is one that is read: a file, a device, standard input, or a URL of
    /// one of the ``allowedSchemes``.
    ///
    /// - Throws: ``VideoError/unsupportedProtocol(source:scheme:)`` for any other URL.
    public func check() throws(VideoError) {
        guard kind == .url else { return }
        let scheme = self.scheme ?? ""
        guard Self.allowedSchemes.contains(scheme) else {
            throw .unsupportedProtocol(source: description, scheme: String(scheme.prefix(40)))
        }
    }

    /// ffmpeg's `-protocol_whitelist` for the source: the protocols its own scheme needs, so that
    /// what it reads cannot lead ffmpeg to others (an HLS playlist naming `file:` segments, say);
    /// `nil` for a device (opened by its demuxer, not by a protocol).
    var protocolWhitelist: String? {
        switch kind {
        case .file: return "file"
        case .standardInput: return "pipe"
        case .device: return nil
        case .url:
            switch scheme {
            case "http", "https": return "http,https,tcp,tls,crypto,httpproxy"
            case "rtsp", "rtsps": return "rtsp,rtsps,rtp,srtp,udp,tcp,tls"
            case "rtmp", "rtmps": return "rtmp,rtmps,tcp,tls"
            case "udp": return "udp"
            case "tcp": return "tcp"
            case "srt": return "srt"
            default: return "none"
            }
        }
    }

    /// Whether the watchdog watches it: every source but a regular file, which cannot stall
    /// (a slow machine decoding it is not a dead source; a named pipe can stall and is watched).
    var canStall: Bool {
        guard kind == .file else { return true }
        var info = stat()
        guard stat(location, &info) == 0 else { return true }
        return (info.st_mode & S_IFMT) != S_IFREG
    }

    private static func isCharacterDevice(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        return (info.st_mode & S_IFMT) == S_IFCHR
    }
}
