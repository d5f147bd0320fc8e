import ArgumentParser
import NetRunner
import NetRunnerEvaluation
import NetRunnerJobs
import NetRunnerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension NetRunnerCommand {
    /// `netrunner bulk`: `bulk DIR` (``Images``, the default) and `bulk merge` (``Merge``).
    struct Bulk: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: Images.configuration.abstract,
            discussion: Images.configuration.discussion,
            subcommands: [Images.self, Merge.self],
            defaultSubcommand: Images.self)
    }
}

extension NetRunnerCommand.Bulk {
    /// `netrunner bulk DIR`: Net Runner's photo-album evaluation over a whole folder tree.
    struct Images: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "images",
            abstract: "Run a model on every image under a folder, one result line per image.",
            discussion: """
                Every image under DIR (recursively, in sorted order) is run through the model; each result is \
                one line: JSON Lines, or CSV when --output ends in .csv or --format csv is given. A line holds \
                the image, the answer (top labels, or boxes for a detector), the decode, preprocessing and \
                inference latency in milliseconds, or the error for that image; a file that cannot be read is \
                reported on its line and the run goes on.

                With --output, an interrupted run resumes: rerunning the same command skips the images already \
                in the file (an unfinished last line is cut off first); --restart starts the file afresh. \
                Ctrl-C stops after the images in flight, leaving only whole lines (exit 130); SIGTERM stops \
                taking images at once and exits 143 within 2 seconds, leaving only whole lines. Two runs cannot \
                write one output file: the second is refused at once.

                With --threads N (default: every core), N interpreters work side by side, each on one thread \
                (--runtime-threads M: M threads inside each); with 1, decoding runs on a second thread ahead of \
                inference. A progress bar with the rate and \
                the time left is drawn on stderr when it is a terminal. Exit status: 0 when every image gave \
                an answer (this run or the one resumed), 1 when any failed, 130 when interrupted.

                On several machines: --shard I/N runs the images whose path under its folder hashes to I (a \
                Kubernetes Indexed Job's JOB_COMPLETION_INDEX and JOB_COMPLETION_COUNT are read when set, else a \
                Slurm array task's SLURM_ARRAY_TASK_ID as the shard index of NETRUNNER_SHARD_COUNT, see \
                deploy/slurm); \
                `netrunner bulk merge SHARD.jsonl... --output FILE` joins the shards' files into what one machine \
                would have written.
                """)

        @OptionGroup var inputs: ImageArguments

        @OptionGroup var model: ModelOptions

        @OptionGroup var taskChoice: TaskOption

        @Option(name: .shortAndLong, help: "Write the results to this file (resumable) instead of stdout.")
        var output: String?

        @Option(help: "jsonl or csv (default: csv for a .csv output, else jsonl).")
        var format: FormatChoice?

        enum FormatChoice: String, ExpressibleByArgument, CaseIterable {
            case jsonl, csv

            var format: BulkResultsFile.Format { self == .csv ? .csv : .jsonLines }
        }

        @Flag(help: "Start the output file afresh instead of resuming it.")
        var restart = false

        @Flag(
            name: .customLong("retry-failed"),
            help: "Run again the images whose line in --output says they failed (their lines are replaced).")
        var retryFailed = false

        @Flag(
            help:
                "Make --output hold the images listed now: run again those changed since their line was written (size, time and file number, kept in OUTPUT.files.json) and drop the lines of those no longer listed."
        )
        var sync = false

        @OptionGroup var resultOptions: ResultFlags

        @Option(
            help: ArgumentHelp(
                "Run only shard I of N (from 0): the images whose path under its folder hashes to I (default: a Kubernetes pod's JOB_COMPLETION_INDEX of JOB_COMPLETION_COUNT, else a Slurm array task's SLURM_ARRAY_TASK_ID of NETRUNNER_SHARD_COUNT, so a requeued or resubmitted task reruns its shard; without NETRUNNER_SHARD_COUNT, the task's place in a dense array).",
                valueName: "i/n"))
        var shard: String?

        /// Images per invoke on the GPU when `--batch` is not given.
        static let gpuBatch = 8

        @Option(
            name: .customLong("batch"), parsing: .unconditional,
            help:
                "On the GPU, images a classifier runs per invoke (default: 8; the model's batch dimension is resized). The CPU always runs one image per interpreter."
        )
        var batchSize: Int?

        @Flag(name: .customLong("no-progress"), help: "Never draw the progress bar.")
        var noProgress = false

        func validate() throws {
            guard !inputs.images.isEmpty else { throw ValidationError("Name a folder of images (or image files).") }
            if restart && output == nil { throw ValidationError("--restart needs --output.") }
            if retryFailed && output == nil { throw ValidationError("--retry-failed needs --output.") }
            if sync && output == nil { throw ValidationError("--sync needs --output.") }
            if let batchSize { try OptionLimits.check(batchSize, "--batch", in: 1...256) }
            if retryFailed && restart { throw ValidationError("--retry-failed and --restart cannot be used together.") }
            if let shard { try FlagAdvice.checking { _ = try BulkShard(parsing: shard) } }
        }

        func run() async throws {
            let (listed, unreadable) = try inputs.requiredFiles()
            let loaded = try await model.load(defaultFor: .classification)
            var settings = BulkSettings(roots: inputs.images, files: listed, model: loaded)
            settings.task = try taskChoice.chosenKind(for: loaded)
            settings.options.baseOptions = model.baseOptions
            settings.options.results = resultOptions.options
            settings.options.labelsPath = model.labels
            settings.shard = try BulkShard.chosen(option: shard)
            settings.threads = model.threadCount
            settings.runtimeThreads = model.runtimeThreads
            settings.batchSize = batchSize ?? Self.gpuBatch
            settings.output = output
            settings.format = format?.format ?? .implied(by: output ?? "")
            (settings.restart, settings.retryFailed, settings.sync) = (restart, retryFailed, sync)
            let job: BulkJob
            do {
                job = try BulkJob(settings)
            } catch let error as BulkJob.OtherRunError {
                Console.diagnostic(FlagAdvice.message(for: error) ?? "\(error)")
                throw ExitCode.failure
            }
            if let notice = model.assumptionNotice(for: loaded, task: job.kind) { Console.diagnostic(notice) }
            AcceleratorNotice.note(
                requested: settings.options.accelerator, fallbackReason: job.acceleratorFallbackReason)
            for note in job.notes { Self.say(note) }
            if format == .csv && output == nil { Console.print(BulkResultsFile.csvColumns.joined(separator: ",")) }
            let lineFormat = format?.format ?? .jsonLines

            let interrupted = Interruption()
            let progress = ProgressBar(total: job.pending.count, unit: "images", enabled: !noProgress)
            let clock = ContinuousClock()
            let started = clock.now
            let printsLines = output == nil
            let tally = try job.run(
                isCancelled: { interrupted.happened },
                deliver: { record in
                    if printsLines {
                        progress.finish()
                        Console.print(String(lineFormat.line(for: record).dropLast()))
                    }
                    progress.advance()
                })
            progress.finish()
            let elapsed = clock.now - started
            if let writeError = tally.writeError {
                // A write error (a full disk, an I/O error) is a failure, not a usage error.
                Console.diagnostic("Stopped: \(writeError)")
                throw ExitCode.failure
            }
            Self.summarize(tally, elapsed: elapsed, threads: settings.threads)
            if unreadable > 0 {
                Console.diagnostic(
                    "\(unreadable) entries under \(inputs.images.joined(separator: ", ")) could not be searched.")
            }
            if interrupted.happened {
                Console.diagnostic(
                    "Interrupted after \(tally.count) of \(job.pending.count) images"
                        + (output.map { "; rerun the same command to resume \($0)." } ?? "."))
                throw ExitCode(interrupted.exitCode)
            }
            if tally.earlierFailures > 0 {
                Console.diagnostic(
                    "\(tally.earlierFailures) image(s) had already failed in the earlier run (in \(output ?? "")).")
            }
            if tally.failed + tally.earlierFailures + unreadable > 0 { throw ExitCode.failure }
        }

        /// A note of the job's preparation, on stderr.
        private static func say(_ note: BulkJob.Note) {
            switch note {
            case .shard(let shard, let kept, let total):
                Console.diagnostic("Shard \(shard): \(kept) of \(total) images.")
            case .noDescription(let file, let sidecar):
                Console.diagnostic("note: \(file) has no run description (\(sidecar)); taking it as this run's.")
            case .retrying(let count, let file):
                Console.diagnostic("Retrying \(count) failed image(s) from \(file).")
            case .synced(let changed, let removed, let file) where changed + removed > 0:
                Console.diagnostic(
                    "Syncing \(file): \(changed) image(s) changed since they ran, run again; "
                        + "\(removed) no longer listed, their lines dropped.")
            case .synced:
                break
            case .resuming(let file, let resumed, let repaired, let pending, let total):
                Console.diagnostic(
                    "Resuming \(file): \(resumed) results already there"
                        + (repaired ? " (an unfinished last line was cut off)" : "")
                        + ", \(pending) of \(total) images to go.")
            }
        }

        private static func summarize(_ tally: BulkTally, elapsed: Duration, threads: Int) {
            let seconds = Console.seconds(elapsed)
            let rate = seconds > 0 ? Double(tally.count) / seconds : 0
            var line =
                "\(tally.count) images in \(Console.format(seconds, decimals: 1)) s "
                + "(\(Console.format(rate, decimals: 1)) images/s, \(threads) thread\(threads == 1 ? "" : "s"))"
            if tally.failed > 0 { line += ", \(tally.failed) failed" }
            if tally.skipped > 0 { line += ", \(tally.skipped) already done" }
            Console.diagnostic(line + ".")
            var warmUp = 0
            for (name, summary) in tally.latency.summary.stages {
                guard let summary else { continue }
                warmUp = summary.warmUpExcluded
                Console.diagnostic("  \(name) ms: \(summary.text)")
            }
            if tally.batchCount > 0 {
                // Which is which: the inference line above is each image's share of its batch.
                let batches = tally.batchCount.rounded()
                Console.diagnostic(
                    "  batches: \(Console.format(batches, decimals: 0)) (\(tally.batchedImages) images), inference ms "
                        + "per batch: mean \(Console.format(tally.batchMilliseconds / tally.batchCount, decimals: 2)); "
                        + "the inference line is each image's share of its batch")
            }
            if warmUp > 0 {
                Console.diagnostic("  (the first \(warmUp) image\(warmUp == 1 ? "" : "s") excluded as warm-up)")
            }
        }
    }
}

extension NetRunnerCommand.Bulk {
    /// `netrunner bulk merge SHARD... --output FILE`: the shards' results as one run's.
    struct Merge: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Join the results of bulk --shard runs into the file one machine would have written.",
            discussion: """
                Every shard of the run must be given once (their .run.json descriptions must agree: the same \
                model, options and folders); the merged file holds each image once, in the order of a single \
                run, and gets the run's description, so `bulk` resumes it and `report` reads it. Written \
                atomically: FILE is the whole merge or untouched.
                """)

        @Argument(help: "The shards' JSON Lines results files.")
        var shards: [String] = []

        @Option(name: .shortAndLong, help: "The merged results file (.jsonl).")
        var output: String

        func validate() throws {
            guard !shards.isEmpty else { throw ValidationError("Name the shards' results files.") }
        }

        func run() throws {
            let summary = try BulkMerge.merge(shards, into: output)
            Console.diagnostic(
                "Merged \(summary.shards) shards into \(output): \(summary.lines) images"
                    + (summary.failures > 0 ? ", \(summary.failures) failed" : "") + ".")
        }
    }
}
