package import NetRunner
package import NetRunnerEvaluation
import Synchronization
import TensorFlowLite

/// One `netrunner bulk` run over folders of images, made of its ``BulkSettings``: the shard's
/// images, the run's identity beside its results file (a resumed file must be the same run),
/// resume and retry of failed images, the model's task on every thread, then the images to go
/// through it with every line written whole, and the tally.
///
///     var settings = BulkSettings(roots: ["photos"], files: listed, model: model)
///     settings.output = "out.jsonl"
///     let job = try BulkJob(settings)
///     let tally = try job.run(deliver: { print($0.image) })
///
/// Preparing makes the task once (a model that cannot run is one error, and nothing is
/// written), then writes nothing but the run's description (when the file is new, or had none);
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
        /// A syncing run's lines taken out (``BulkSettings/sync``): of images changed since
        /// their line was written, to be run again, and of images no longer listed.
        case synced(changed: Int, removed: Int, file: String)
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
    /// The settings the job was made of.
    package let settings: BulkSettings
    /// The task the model runs as: ``BulkSettings/task``, else the model's.
    package let kind: ImageTask.Kind
    /// Why the task runs on the CPU when it asked for ``Accelerator/auto``, or `nil`.
    package let acceleratorFallbackReason: String?

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

    /// Prepares a run: the task made once, the shard's images, the results file opened
    /// (resumed unless ``BulkSettings/restart``), the run's identity checked or written, failed
    /// lines dropped with ``BulkSettings/retryFailed``, changed and unlisted images' lines with
    /// ``BulkSettings/sync``, the images still to run.
    ///
    /// - Parameter settings: The run.
    /// - Throws: The task's errors (``NetRunnerError``, ``InterpreterError``); ``OtherRunError``;
    ///   ``BulkError`` for a file that cannot be used.
    package init(_ settings: BulkSettings) throws {
        let (roots, listed, shard, model, output) = (
            settings.roots, settings.files, settings.shard, settings.model, settings.output
        )
        let kind = settings.task ?? ImageTask.kind(of: model)
        var options = settings.options
        options.kind = kind
        // Made once before anything is written: a model that cannot run is one clear error.
        let probe = try ImageTask(model: model, options: options)
        self.settings = settings
        self.kind = kind
        self.acceleratorFallbackReason = probe.acceleratorFallbackReason
        var notes: [Note] = []
        let files = shard.map { shard in listed.filter { shard.contains($0, roots: roots) } } ?? listed
        if let shard { notes.append(.shard(shard, kept: files.count, of: listed.count)) }
        let results = try output.map {
            try BulkResultsFile(path: $0, format: settings.format, resume: !settings.restart)
        }
        let identity = BulkRunIdentity(
            modelSHA256: model.sha256, model: model.name, options: try settings.identityOptions(), roots: roots)
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
            if settings.retryFailed { notes.append(.retrying(count: try results.dropFailedRecords(), file: output)) }
            if settings.sync {
                // Against every image listed, not the shard's: another shard's are still listed.
                let listedKeys = listed.map { (path: $0, key: identity.spelling(of: $0, as: spelling)) }
                let (changed, removed) = try BulkFingerprints.sync(results, output: output, listed: listedKeys)
                notes.append(.synced(changed: changed, removed: removed, file: output))
            }
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

    /// Runs the pending images on ``BulkSettings/threads`` tasks of its own: each line
    /// appended whole to the results file (or, without one, handed to `deliver` only), in file
    /// order.
    ///
    /// A write error (a full disk) stops the run after the images in flight; it is in the
    /// tally, not thrown.
    ///
    /// - Parameters:
    ///   - isCancelled: Whether to stop taking images (Ctrl-C).
    ///   - deliver: Each record, after it is written.
    /// - Returns: The counts and latencies.
    /// - Throws: The first error making a task throws.
    package func run(
        isCancelled: @Sendable () -> Bool = { false }, deliver: @Sendable (ResultsLine) -> Void = { _ in }
    ) throws -> BulkTally {
        let (settings, kind) = (self.settings, self.kind)
        let threads = settings.threads
        let results = self.results
        let shownAnswers = settings.options.results
        let tally = Mutex(BulkTally(warmUp: threads))
        let stopped = Atomic<Bool>(false)
        let keys = pendingKeys
        try BulkInference.run(
            files: pending, threads: threads, accelerator: settings.options.accelerator, batchSize: settings.batchSize,
            makeTask: { threadCount in
                var options = settings.options
                options.kind = kind
                options.threadCount = settings.runtimeThreads ?? threadCount
                return try ImageTask(model: settings.model, options: options)
            },
            isCancelled: { stopped.load(ordering: .relaxed) || isCancelled() },
            deliver: { index, outcome in
                let record: ResultsLine
                switch outcome {
                case .success(let answer): record = ResultsLine(image: keys[index], answer: shownAnswers.shown(answer))
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
