/// Why a bulk run's files cannot be used: a results file, the run description beside it, the
/// shards of a merge.
///
/// Each case says what happened, in the job's terms; the command line, which knows its flags,
/// adds what to do about it (start afresh with `--restart`, choose another `--output`) when it
/// prints one.
package enum BulkError: Error, Equatable, Hashable, Sendable {
    /// A results file could not be opened, locked, read or written: the file and the reason.
    case unreadableResults(file: String, reason: String)
    /// A results file to resume holds something else than results: the number of its first line
    /// that is not a results line, or `nil` for a CSV file without the results header.
    case foreignResults(file: String, line: Int?)
    /// The run description beside a results file is not one: the description's file and why.
    case damagedRunDescription(file: String, reason: String)
    /// Shard results that cannot be merged into one run's: the file and why.
    case unmergeable(file: String, reason: String)
    /// A file given to merge as a shard's that has no run description (looked for at `sidecar`).
    case noRunDescription(file: String, sidecar: String)
    /// A file given to merge as a shard's whose run description is a whole run's.
    case wholeRun(file: String)
    /// A test's results given to merge as an evaluation shard's that are not a shard's.
    case notEvaluationShard(file: String)
}

extension BulkError: CustomStringConvertible {
    /// What happened, naming the file.
    package var description: String {
        switch self {
        case .unreadableResults(let file, let reason):
            "\(file): cannot use it for results: \(reason)"
        case .foreignResults(let file, let line?):
            "\(file): cannot use it for results: line \(line) is not a results line"
        case .foreignResults(let file, nil):
            "\(file): cannot use it for results: it does not start with the results header"
        case .damagedRunDescription(let file, let reason):
            "\(file): cannot use it for results: it is not a run description (\(reason))"
        case .unmergeable(let file, let reason):
            "\(file): cannot merge it: \(reason)"
        case .noRunDescription(let file, let sidecar):
            "\(file): cannot merge it: it has no run description (\(sidecar))"
        case .wholeRun(let file):
            "\(file): cannot merge it: it holds a whole run, not a shard"
        case .notEvaluationShard(let file):
            "\(file): cannot merge it: it is not a shard's results"
        }
    }
}
