package import NetRunner

/// Counts and latencies of a ``BulkJob``'s run, in bounded memory however many images.
package struct BulkTally: Sendable {
    /// Images run.
    package var count = 0
    /// Images that failed.
    package var failed = 0
    /// Images already done in the resumed file.
    package var skipped = 0
    /// Images that had failed in the resumed file (and were not retried).
    package var earlierFailures = 0
    /// Decoding, preprocessing, inference and all three, in milliseconds (the first image of
    /// each thread left out as warm-up).
    package var latency: StageLatencySamples
    /// Images that ran in batches (`bulk --batch` on the GPU).
    package var batchedImages = 0
    /// The batches they ran in: each image counts for 1/size of its batch.
    package var batchCount: Double = 0
    /// The batches' whole inference time, in milliseconds (each image adds its share).
    package var batchMilliseconds: Double = 0
    /// Why writing the results file stopped the run, if it did.
    package var writeError: String?

    /// A tally leaving out `warmUp` samples of each latency (the first image of each thread
    /// pays for the runtime's set-up).
    ///
    /// - Parameter warmUp: The samples left out.
    package init(warmUp: Int) {
        latency = StageLatencySamples(warmUp: warmUp)
    }

    /// Counts a record.
    ///
    /// - Parameter record: The record.
    package mutating func add(_ record: ResultsLine) {
        count += 1
        guard let answer = record.answer else {
            failed += 1
            return
        }
        latency.add(answer, totalMilliseconds: record.totalMilliseconds ?? 0)
        if let batch = answer.batch, batch.size > 0 {
            batchedImages += 1
            batchCount += 1 / Double(batch.size)
            batchMilliseconds += batch.inferenceMilliseconds / Double(batch.size)
        }
    }
}
