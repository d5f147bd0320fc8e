import NetRunner
import NetRunnerImage
import NetRunnerVideo

/// The annotated video of `--annotate`: every frame that reaches the process (with `--every N`
/// only every Nth: ffmpeg leaves the others out), with the latest answer drawn, at the source's
/// timing.
struct AnnotatedVideo {
    let path: String
    var writer: VideoWriter? = nil
    /// The first frame, held until the second gives the frame rate, with the answer it had then
    /// (not the second frame's).
    var first: (frame: VideoFrame, answer: Answer?)? = nil
    var latest: Answer? = nil
    typealias Answer = (answer: ImageAnswer, sourceSize: PixelSize)
    var lastIndex = -1

    init(path: String) {
        self.path = path
    }

    mutating func add(_ frame: VideoFrame, answer: ImageAnswer?) async throws {
        if let answer { latest = (answer, frame.sourceSize) }
        // Live mode answers a frame after later ones were written: its answer is drawn from now on.
        guard frame.index > lastIndex else { return }
        lastIndex = frame.index
        guard let writer else {
            guard let first else {
                first = (frame, latest)
                return
            }
            let step = frame.timestampMilliseconds - first.frame.timestampMilliseconds
            let fps = step > 0 ? 1000 / step : 25
            let writer = try VideoWriter(path: path, size: first.frame.pixels.size, framesPerSecond: fps)
            self.writer = writer
            try await writer.write(draw(first.answer, on: first.frame))
            try await writer.write(draw(latest, on: frame))
            return
        }
        try await writer.write(draw(latest, on: frame))
    }

    mutating func finish() async throws {
        if writer == nil, let first {
            let writer = try VideoWriter(path: path, size: first.frame.pixels.size, framesPerSecond: 25)
            self.writer = writer
            try await writer.write(draw(first.answer ?? latest, on: first.frame))
        }
        try await writer?.finish()
    }

    private func draw(_ latest: Answer?, on frame: VideoFrame) throws -> PixelBuffer {
        guard let latest else { return frame.pixels }
        return try Annotator.draw(
            latest.answer.scaled(from: latest.sourceSize, to: frame.pixels.size), on: frame.pixels)
    }
}
