import NetRunnerImage
import NetRunnerSupport

/// Reads ffmpeg's log (`-loglevel level+info` on stderr): the two `showinfo` lines of each frame,
/// paired into ``FrameInfo``s, and the last warnings and errors for messages.
struct FFmpegLog {
    /// What the log says of one frame sent on stdout.
    struct FrameInfo: Equatable {
        /// The frame's number among the decoded frames (after the fps filter), from 0.
        var number: Int
        /// Its presentation time in seconds, or `nil` when the stream has none.
        var presentationTime: Double?
        /// The source's picture size.
        var sourceSize: PixelSize
        /// The size of the frame sent.
        var size: PixelSize
    }

    /// One line's meaning.
    enum Event: Equatable {
        /// A frame was decoded (and will be sent unless `every` leaves it out).
        case decoded(number: Int)
        /// A frame is about to be sent on stdout.
        case frame(FrameInfo)
        /// Anything else.
        case other
    }

    private let decodedPrefix: String
    private let sentPrefix: String
    private let everyNthFrame: Int
    /// Decoded frames that will be sent, waiting for their second line.
    private var waiting: [(number: Int, time: Double?, size: PixelSize)] = []
    private var waitingStart = 0
    /// The last lines at warning level or worse.
    private(set) var problems: [String] = []
    /// The last lines of any level (a fallback when no line is a warning).
    private(set) var lastLines: [String] = []

    init(command: FFmpegCommand, everyNthFrame: Int) {
        decodedPrefix = "[Parsed_showinfo_\(command.decodedFilterIndex) @"
        sentPrefix = "[Parsed_showinfo_\(command.sentFilterIndex) @"
        self.everyNthFrame = max(1, everyNthFrame)
    }

    /// Reads one line of the log.
    mutating func read(_ line: Substring) -> Event {
        if line.hasPrefix(decodedPrefix) || line.hasPrefix(sentPrefix) {
            guard let fields = Self.frameFields(line) else { return .other }
            if line.hasPrefix(decodedPrefix) {
                if fields.number % everyNthFrame == 0 {
                    waiting.append((fields.number, fields.time, fields.size))
                }
                return .decoded(number: fields.number)
            }
            guard waitingStart < waiting.count else { return .other }
            let decoded = waiting[waitingStart]
            waitingStart += 1
            if waitingStart > 64 {
                waiting.removeFirst(waitingStart)
                waitingStart = 0
            }
            return .frame(
                FrameInfo(
                    number: decoded.number, presentationTime: decoded.time, sourceSize: decoded.size,
                    size: fields.size))
        }
        remember(line)
        return .other
    }

    /// The log's explanation of a failure: the last errors and warnings (else the last lines),
    /// without ffmpeg's tags, joined in one line.
    var explanation: String {
        let lines = problems.isEmpty ? Array(lastLines.suffix(2)) : Array(problems.suffix(3))
        return lines.joined(separator: "; ")
    }

    private mutating func remember(_ line: Substring) {
        var text = line
        var level = ""
        // Strip "[component @ 0x...] " and "[level] " tags.
        while text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            let tag = text[text.index(after: text.startIndex)..<close]
            if !tag.contains(" @ ") { level = String(tag) }
            text = text[text.index(after: close)...].drop(while: { $0 == " " })
        }
        // ffmpeg quotes the source's URL, password and all: masked before it is kept.
        let trimmed = String(URLCredentials.masked(String(text)).prefix(300))
        guard !trimmed.isEmpty else { return }
        if ["warning", "error", "fatal", "panic"].contains(level) {
            problems.append(trimmed)
            if problems.count > 8 { problems.removeFirst() }
        } else if level != "info" || !trimmed.hasPrefix("color_range") {
            lastLines.append(trimmed)
            if lastLines.count > 8 { lastLines.removeFirst() }
        }
    }

    /// `n:`, `pts_time:` and `s:` of a showinfo frame line.
    static func frameFields(_ line: Substring) -> (number: Int, time: Double?, size: PixelSize)? {
        guard let n = value(after: " n:", in: line), let number = Int(n),
            let s = value(after: " s:", in: line)
        else { return nil }
        let dimensions = s.split(separator: "x")
        guard dimensions.count == 2, let width = Int(dimensions[0]), let height = Int(dimensions[1]),
            width > 0, height > 0
        else { return nil }
        let time = value(after: " pts_time:", in: line).flatMap { Double($0) }.flatMap { $0.isFinite ? $0 : nil }
        return (number, time, PixelSize(width: width, height: height))
    }

    /// The text after `key` up to the next space, skipping spaces right after the key.
    private static func value(after key: String, in line: Substring) -> Substring? {
        guard let range = line.firstRange(of: key) else { return nil }
        let rest = line[range.upperBound...].drop(while: { $0 == " " })
        return rest.prefix(while: { $0 != " " })
    }
}
