import Dispatch
import FoundationEssentials
import NetRunner
import NetRunnerEngine
import NetRunnerImage
import NetRunnerJobs
import NetRunnerSupport
import Synchronization

/// What `GET /v1/runs/{id}` says.
struct AlbumRunReport: Encodable, Sendable {
    /// One image's line: its index in the album and the results line.
    struct Line: Encodable, Sendable {
        var index: Int
        var result: ResultsLine
    }

    var id: String
    var album: String
    var model: String
    /// `running` or `finished`.
    var state = "running"
    var total = 0
    var done = 0
    var failed = 0
    var offset = 0
    /// The answered photos' latency per stage, as `bulk` and `evaluate` summarise theirs.
    var latency = StageLatencies()
    var results: [Line] = []
}

/// The album runs of this server's life, the last 10, at most ``maximumRunning`` of them
/// running (a ``JobStore``).
///
/// An album run is a bulk run in what it writes and counts: each photo one ``ResultsLine``,
/// counted by a ``BulkTally`` as `netrunner bulk` counts its lines. Its loop is not
/// ``BulkJob``'s: a bulk job makes interpreters of its own on threads of its own
/// (``BulkInference``) and appends to a results file with an identity, resume and shards, where
/// an album run borrows serve's engine (its workers' interpreters, its bounded queue, shared
/// with live requests), keeps its lines in memory for `GET /v1/runs/{id}` to page through, and
/// writes no file.
final class AlbumRuns: Sendable {
    /// The most runs going at once.
    ///
    /// A queue of runs would itself grow without bound, and one run already keeps every worker
    /// busy: another run is refused (429) until one finishes.
    static let maximumRunning = 2

    struct Run: Sendable {
        var report: AlbumRunReport
        var lines: [AlbumRunReport.Line?]
        /// The lines counted, as a bulk run counts them.
        var tally = BulkTally(warmUp: 0)
    }

    private let runs = JobStore<Run>(kept: 10, maximumRunning: maximumRunning) { $0.report.state == "running" }

    /// A new run's id, or `nil` when ``maximumRunning`` runs are going already.
    func begin(album: AlbumRoutes.Album, model: String) -> String? {
        runs.begin { id in
            var report = AlbumRunReport(id: id, album: album.id, model: model)
            report.total = album.files.count
            if album.files.isEmpty { report.state = "finished" }
            return Run(report: report, lines: Array(repeating: nil, count: album.files.count))
        }
    }

    func record(_ id: String, index: Int, _ record: ResultsLine) {
        runs.update(id) { run in
            run.lines[index] = .init(index: index, result: record)
            run.tally.add(record)
            run.report.done = run.tally.count
            run.report.failed = run.tally.failed
        }
    }

    func finish(_ id: String) {
        runs.update(id) { $0.report.state = "finished" }
    }

    /// The report with the finished lines from `offset` (in album order), at most `limit`.
    func report(_ id: String, offset: Int, limit: Int) -> AlbumRunReport? {
        guard let run = runs.job(id) else { return nil }
        var report = run.report
        report.offset = offset
        report.latency = run.tally.latency.summary
        if offset < run.lines.count, limit > 0 {
            report.results = run.lines[offset..<min(run.lines.count, offset + limit)].compactMap { $0 }
        }
        return report
    }
}

/// Small JPEGs of album images, made off the event loop and kept (the last 2,000).
final class ThumbnailCache: Sendable {
    private let cache = Mutex<(entries: [ExactString: Data], order: [ExactString])>(([:], []))

    func jpeg(of path: String) async -> Data? {
        let key = ExactString(path)
        if let found = cache.withLock({ $0.entries[key] }) { return found }
        // Decoded where the server decodes (the environment its run binds), off the event loop.
        let environment = ImageDecoder.environment
        let made: Data? = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(
                    returning: ImageDecoder.$environment.withValue(environment) {
                        Thumbnail.make(path: path, longerSide: 240)?.jpeg
                    })
            }
        }
        guard let made else { return nil }
        cache.withLock { cache in
            if cache.entries[key] == nil {
                cache.entries[key] = made
                cache.order.append(key)
                if cache.order.count > 2000 { cache.entries[cache.order.removeFirst()] = nil }
            }
        }
        return made
    }
}

extension AlbumRuns {
    /// Runs every image of an album through a model, one per worker at a time.
    static func run(
        _ run: String, album: AlbumRoutes.Album, model: String, options: AnswerOptions, engine: InferenceEngine,
        runs: AlbumRuns,
        limit: Int
    ) async {
        let width = max(1, engine.configuration.threads / AlbumRuns.maximumRunning)
        await withTaskGroup(of: (Int, ResultsLine).self) { group in
            var next = 0
            func submit() {
                guard next < album.files.count else { return }
                let index = next
                next += 1
                group.addTask {
                    (
                        index,
                        await answer(
                            album: album, index: index, model: model, options: options, engine: engine, limit: limit)
                    )
                }
            }
            for _ in 0..<width { submit() }
            while let (index, record) = await group.next() {
                runs.record(run, index: index, record)
                submit()
            }
        }
        runs.finish(run)
    }

    /// One image's results line; a full queue is waited out (the engine wakes the run when a
    /// worker takes a job), not reported.
    static func answer(
        album: AlbumRoutes.Album, index: Int, model: String, options: AnswerOptions, engine: InferenceEngine, limit: Int
    ) async -> ResultsLine {
        let name = album.relative(index)
        let data: Data
        do {
            // Only while it lies inside the album: checked again as it is opened.
            data = try album.read(index, maximumSize: limit)
        } catch {
            return ResultsLine(image: name, model: model, error: "\(error)")
        }
        do {
            let answer = try await engine.answerWhenRoom(model: model, image: data, options: options.taskOptions)
            return ResultsLine(image: name, model: model, answer: options.results.shown(answer))
        } catch {
            return ResultsLine(image: name, model: model, error: "\(error)")
        }
    }
}
