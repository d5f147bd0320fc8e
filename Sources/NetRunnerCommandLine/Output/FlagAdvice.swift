import NetRunnerEvaluation
import NetRunnerJobs

/// The jobs' errors as the command line prints them: what happened, as the error says it, and
/// what to do about it with this tool's flags (`--restart`, `--output`, `--shard`), which only
/// the command line knows.
///
/// The jobs (`NetRunnerJobs`) and evaluation (`NetRunnerEvaluation`) say what happened in typed
/// cases; the advice is added here, where the flags are spelled.
enum FlagAdvice {
    /// An error thrown while checking flags, printed as its advised message (exit status 1, as
    /// any error a command throws).
    struct Advised: Error, CustomStringConvertible {
        /// The message.
        var description: String
    }

    /// The message of an error of the jobs or of evaluation, with its advice.
    ///
    /// - Parameter error: Any error.
    /// - Returns: The message, or `nil` for an error that takes no advice.
    static func message(for error: any Error) -> String? {
        switch error {
        case let error as BulkError: advised(error)
        case let error as EvaluationError: advised(error)
        case let error as BulkJob.OtherRunError:
            "\(error) Start it afresh with --restart, or choose another --output."
        case let error as EvaluationRun.MixedResultsError: "\(error) Use another --output, or --restart."
        default: nil
        }
    }

    /// Runs a check, its job or evaluation error thrown again with its advice.
    ///
    /// - Parameter check: The check (`validate()`'s, whose errors ArgumentParser prints itself).
    /// - Throws: ``Advised``, or what `check` throws that takes no advice.
    static func checking(_ check: () throws -> Void) throws {
        do {
            try check()
        } catch {
            guard let message = message(for: error) else { throw error }
            throw Advised(description: message)
        }
    }

    /// A bulk file's error with the flags that fix it.
    private static func advised(_ error: BulkError) -> String {
        switch error {
        case .foreignResults: "\(error) (start afresh with --restart, or choose another file)"
        case .damagedRunDescription: "\(error); delete it or start afresh with --restart"
        case .noRunDescription: "\(error); shards are written by bulk --shard I/N --output FILE"
        case .wholeRun: "\(error) (no --shard in its description)"
        case .notEvaluationShard: "\(error) (written by evaluate --shard I/N)"
        case .unreadableResults, .unmergeable: "\(error)"
        }
    }

    /// A shard's error with the flag that names one.
    private static func advised(_ error: EvaluationError) -> String {
        switch error {
        case .badShard(let text):
            "\"\(text)\" is not a shard: give INDEX/COUNT with 0 <= INDEX < COUNT (--shard 0/4 ... 3/4; a Kubernetes "
                + "Indexed Job sets JOB_COMPLETION_INDEX, the manifest JOB_COMPLETION_COUNT; a Slurm array task's "
                + "SLURM_ARRAY_TASK_ID is the index of NETRUNNER_SHARD_COUNT)."
        case .badShardEnvironment:
            // The error's text ends in its parenthesis; the flag that decides over it goes inside.
            "\(String("\(error)".dropLast())) --shard I/N decides over both.)"
        default: "\(error)"
        }
    }
}
