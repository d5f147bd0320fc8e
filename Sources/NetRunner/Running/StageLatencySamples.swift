/// The latencies of a run's answers gathered one answer at a time, per stage, in bounded
/// memory (``LatencySamples``); failed answers count for nothing.
public struct StageLatencySamples: Sendable {
    private var decode: LatencySamples
    private var preprocess: LatencySamples
    private var inference: LatencySamples
    private var total: LatencySamples

    /// Creates empty samples.
    ///
    /// - Parameter warmUp: How many answers at the front are left out of the summary (the
    ///   first image of each thread pays for the runtime's set-up).
    public init(warmUp: Int = 0) {
        decode = LatencySamples(warmUp: warmUp)
        preprocess = decode
        inference = decode
        total = decode
    }

    /// Adds an answer's stage times.
    ///
    /// - Parameters:
    ///   - answer: The answer.
    ///   - totalMilliseconds: Its three stages together, as its results line counts them.
    public mutating func add(_ answer: ImageAnswer, totalMilliseconds: Double) {
        decode.add(answer.decodingMilliseconds)
        preprocess.add(answer.preprocessingMilliseconds)
        inference.add(answer.inferenceMilliseconds)
        total.add(totalMilliseconds)
    }

    /// Adds a results line's stage times, if it has an answer.
    ///
    /// - Parameter record: The line.
    public mutating func add(_ record: ResultsLine) {
        guard let answer = record.answer else { return }
        add(answer, totalMilliseconds: record.totalMilliseconds ?? 0)
    }

    /// The summary of every stage.
    public var summary: StageLatencies {
        StageLatencies(
            decode: decode.summary, preprocess: preprocess.summary, inference: inference.summary, total: total.summary)
    }
}
