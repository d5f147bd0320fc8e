package import NetRunner
package import NetRunnerEvaluation
import NetRunnerSupport

/// One bulk run, as typed values: the images, the model and how to run it, where the lines go.
///
/// `netrunner bulk`'s flags become these, and ``BulkJob`` makes everything else of them: the
/// run's identity, the tasks, the results file.
///
///     var settings = BulkSettings(roots: ["photos"], files: listed, model: model)
///     settings.output = "out.jsonl"
///     settings.threads = 2
///     let tally = try BulkJob(settings).run()
package struct BulkSettings: Sendable {
    /// The folders and files given, as typed (part of the run's identity; shards hash the
    /// paths under them).
    package var roots: [String]
    /// Every image listed under them.
    package var files: [String]
    /// The model, read once: every interpreter is made from these bytes.
    package var model: LoadedModel
    /// The task to run it as (`--task`), or `nil` for the one told from the model; a chosen
    /// task is part of the run's identity.
    package var task: ImageTask.Kind?
    /// Threads, accelerator, decoding, which answers to report and a labels file (its
    /// `labelsPath`, read into the identity; the model already carries the labels).
    package var options = ImageTask.Options()
    /// The shard to run, or `nil` for every image.
    package var shard: BulkShard?
    /// Interpreters side by side (``BulkInference``).
    package var threads = 1
    /// Threads inside each interpreter, or `nil` for ``BulkInference``'s choice.
    package var runtimeThreads: Int?
    /// On the GPU, images per invoke of a classifier.
    package var batchSize = 1
    /// The results file, or `nil` when the lines go to `deliver` only.
    package var output: String?
    /// The results file's format.
    package var format = BulkResultsFile.Format.jsonLines
    /// Whether to start the results file afresh instead of resuming it.
    package var restart = false
    /// Whether to run again the images whose lines say they failed.
    package var retryFailed = false
    /// Whether the results file is made to hold the images listed now (`--sync`): the lines of
    /// images changed since they were run, and of images no longer listed, taken out, so that
    /// a resumed run runs only the new and changed ones (``BulkFingerprints``).
    package var sync = false

    /// Settings for a run of `model` over `files`, everything else at its default.
    ///
    /// - Parameters:
    ///   - roots: The folders and files given.
    ///   - files: Every image listed under them.
    ///   - model: The model.
    package init(roots: [String], files: [String], model: LoadedModel) {
        self.roots = roots
        self.files = files
        self.model = model
    }

    /// The options that change answers, each as the run's description spells it.
    ///
    /// - Returns: The options given (the defaults are not written).
    /// - Throws: ``FileError`` for a labels file that cannot be read.
    package func identityOptions() throws -> [BulkRunIdentity.Option: String] {
        var identity: [BulkRunIdentity.Option: String] = [:]
        let results = options.results
        if let value = results.maxResults { identity[.maxResults] = String(value) }
        if let value = results.scoreThreshold { identity[.scoreThreshold] = String(value) }
        if !results.categoryAllowlist.isEmpty {
            identity[.categoryAllowlist] = results.categoryAllowlist.joined(separator: "\u{1F}")
        }
        if !results.categoryDenylist.isEmpty {
            identity[.categoryDenylist] = results.categoryDenylist.joined(separator: "\u{1F}")
        }
        if options.scalesWhileDecoding { identity[.fastDecoding] = "on" }
        if let labels = options.labelsPath { identity[.labels] = SHA256.hexDigest(of: try FileIO.contents(of: labels)) }
        if let task { identity[.task] = task.rawValue }
        if let shard { identity[.shard] = shard.description }
        return identity
    }
}
