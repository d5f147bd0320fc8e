package import NetRunner
package import NetRunnerEvaluation
import Synchronization
package import TensorFlowLite

/// One `netrunner bulk` run over folders of images: the shard's images, the run's identity
/// beside its results file (a resumed file must be the same run), resume and retry of failed
/// images, then the images to go through the model with every line written whole, and the
/// tally.
///
///     let job = try BulkJob(roots: ["photos"], listed: files, shard: nil, model: model,
///                           identityOptions: [:], output: "out.jsonl", format: .jsonLines,
///                           restart: false, retryFailed: false)
///     let tally = try job.run(threads: 2, makeTask: { try ImageTask(model: model, options: $0) })
///
/// Preparing writes nothing but the run's description (when the file is new, or had none);
/// a file written by another run is refused, with what differs.
package final class BulkJob: Sendable {
    /// What the command line says of a preparation, in order (diagnostics, not errors).
    package enum Note: Sendable, Equatable {
        /// The shard's images of all listed.
        case shard(BulkShard, kept: Int, of: Int)
        /// A resumed results file had no run description: this run's was written.
        case noDescription(file: String, sidecar: String)
        /// Failed lines dropped, to be run again (`retryFailed`).
        case retrying(count: Int, file: String)
        /// A results file resumed.
        case resuming(file: String, resumed: Int, repairedPartialLine: Bool, pending: Int, total: Int)
    }

    /// The images of this run (the shard's, when sharded), as listed.
    package let files: [String]
    /// The images still to run, as listed.
    package let pending: [String]
    /// Each pending image's key: its path as the results file spells it.
    package let pendingKeys: [String]
    /// The results file, or `nil` when the lines go to `deliver` only.
    package let results: BulkResultsFile?
    /// What to say of the preparation.
    package let notes: [Note]

    /// Another run's results are in the file.
    package struct OtherRunError: Error, CustomStringConvertible {
        /// The results file.
        package var file: String
        /// What differs, one phrase each.
        package var differences: [String]
        /// What happened (the command line adds how to start afresh or write elsewhere).
        package var description: String {
            "\(file) holds the results of another run; what differs: " + differences.joined(separator: "; ") + "."
        }
    }

    /// Prepares a run: the shard's images, the results file opened (resumed unless
    /// `restart`), the run's identity checked or written, failed lines dropped when
    /// `retryFailed`, the images still to run.
    ///
    /// - Parameters:
    ///   - roots: The folders and files given.
    ///   - listed: Every image listed under them.
    ///   - shard: The shard to run, or `nil` for all.
    ///   - model: The model (its digest and name are the run's identity).
    ///   - identityOptions: The options that change answers (part of the identity).
    ///   - output: The results file, or `nil`.
    ///   - format: The results file's format.
    ///   - restart: Whether to start the file afresh.
    ///   - retryFailed: Whether to run again the images whose lines say they failed.
    /// - Throws: ``OtherRunError``; ``BulkError`` for a file that cannot be used.
    package init(
        roots: [String], listed: [String], shard: BulkShard?, model: LoadedModel,
        identityOptions: [BulkRunIdentity.Option: String], output: String?, format: BulkResultsFile.Format,
        restart: Bool,
        retryFailed: Bool
    ) throws {
        var notes: [Note] = []
        let files = shard.map { shard in listed.filter { shard.contains($0, roots: roots) } } ?? listed
        if let shard { notes.append(.shard(shard, kept: files.count, of: listed.count)) }
        let results = try output.map { try BulkResultsFile(path: $0, format: format, resume: !restart) }
        var options = identityOptions
        if let shard { options[.shard] = shard.description }
        let identity = BulkRunIdentity(modelSHA256: model.sha256, model: model.name, options: options, roots: roots)
        var spelling = identity
        if let results, let output {
            if let recorded = try BulkRunIdentity.read(for: output), results.resumedCount > 0 {
                let differences = identity.differences(from: recorded)
                guard differences.isEmpty else { throw OtherRunError(file: output, differences: differences) }
                spelling = recorded
            } else {
                if results.resumedCount > 0 {
                    notes.append(.noDescription(file: output, sidecar: BulkRunIdentity.sidecar(for: output)))
                }
                try identity.write(for: output)
            }
            if retryFailed { notes.append(.retrying(count: try results.dropFailedRecords(), file: output)) }
        }
        // Each file under the path the results file first used for its folder.
        let keys = files.map { identity.spelling(of: $0, as: spelling) }
        let done = results?.completedKeys ?? []
        // Compared byte for byte: `café.jpg` in NFC and in NFD are two files, two keys.
        let pendingIndices = files.indices.filter { !done.contains(ResultsLine.key(image: keys[$0])) }
        self.files = files
        self.pending = pendingIndices.map { files[$0] }
        self.pendingKeys = pendingIndices.map { keys[$0] }
        self.results = results
        if let results, results.resumedCount > 0 {
            notes.append(
                .resuming(
                    file: results.path, resumed: results.resumedCount, repairedPartialLine: results.repairedPartialLine,
                    pending: pending.count, total: files.count))
        }
        self.notes = notes
    }

    /// Runs the pending images: each line appended whole to the results file (or, without
    /// one, handed to `deliver` only), in file order.
    ///
    /// A write error (a full disk) stops the run after the images in flight; it is in the
    /// tally, not thrown.
    ///
    /// - Parameters:
    ///   - threads: Interpreters side by side (``BulkInference``).
    ///   - accelerator: What the tasks run on (on the GPU, one task and `threads` decoders).
    ///   - batchSize: On the GPU, images per invoke of a classifier.
    ///   - makeTask: One interpreter's task, given its runtime thread count.
    ///   - shown: What is kept of each answer.
    ///   - isCancelled: Whether to stop taking images (Ctrl-C).
    ///   - deliver: Each record, after it is written.
    /// - Returns: The counts and latencies.
    /// - Throws: The first error `makeTask` throws.
    package func run(
        threads: Int, accelerator: Accelerator = .cpu, batchSize: Int = 1,
        makeTask: @Sendable (_ threadCount: Int) throws -> ImageTask,
        shown: @Sendable (ImageAnswer) -> ImageAnswer = { $0 }, isCancelled: @Sendable () -> Bool = { false },
        deliver: @Sendable (ResultsLine) -> Void = { _ in }
    ) throws -> BulkTally {
        let tally = Mutex(BulkTally(warmUp: threads))
        let stopped = Atomic<Bool>(false)
        let keys = pendingKeys
        let results = self.results
        try BulkInference.run(
            files: pending, threads: threads, accelerator: accelerator, batchSize: batchSize, makeTask: makeTask,
            isCancelled: { stopped.load(ordering: .relaxed) || isCancelled() },
            deliver: { index, outcome in
                let record: ResultsLine
                switch outcome {
                case .success(let answer): record = ResultsLine(image: keys[index], answer: shown(answer))
                case .failure(let failure): record = ResultsLine(image: keys[index], error: failure.message)
                }
                tally.withLock { $0.add(record) }
                if let results {
                    do {
                        try results.append(record)
                    } catch {
                        tally.withLock { $0.writeError = "\(error)" }
                        stopped.store(true, ordering: .relaxed)
                    }
                }
                deliver(record)
            })
        var final = tally.withLock { $0 }
        final.skipped = files.count - pending.count
        final.earlierFailures = results?.resumedFailures ?? 0
        return final
    }
}
