public import FoundationEssentials
public import NetRunner

/// Errors of evaluation: test bundles that cannot run as written, shards that are not ones,
/// runs that cannot be merged.
public enum EvaluationError: Error, Equatable, Hashable, Sendable {
    /// One problem in `test.json`: its JSON path, what was expected and what was found.
    public typealias Problem = ModelBundleError.Problem

    /// `test.json` is not JSON.
    case malformedJSON(file: String, reason: String)
    /// `test.json` is JSON but not a valid Net Runner test description; every problem is listed.
    case invalidTestDescription(file: String, problems: [Problem])
    /// A test bundle cannot run as written: a missing `test.json`, image or model, labels in
    /// the wrong form for its metric, an unknown metric, a model of the wrong kind.
    case invalidTest(file: String, reason: String)
    /// A shard that is not `I/N` with `0 <= I < N`.
    case badShard(String)
    /// A shard the environment names that cannot be used (a Slurm array task that does not say
    /// which shard of how many it is, a number out of range): the reason.
    case badShardEnvironment(String)
    /// Shard results that cannot be merged into one run's.
    case unmergeable(file: String, reason: String)
}

extension EvaluationError: LocalizedError {
    /// A description naming the file and what happened (the command line adds its flags' advice).
    public var errorDescription: String? {
        switch self {
        case .malformedJSON(let file, let reason):
            "\(file) is not valid JSON: \(reason)"
        case .invalidTestDescription(let file, let problems):
            "\(file) is not a valid test bundle description (\(problems.count) problem\(problems.count == 1 ? "" : "s")): "
                + problems.map(\.description).joined(separator: "; ")
        case .invalidTest(let file, let reason):
            "\(file): \(reason)"
        case .badShard(let text):
            "\"\(text)\" is not a shard: give INDEX/COUNT with 0 <= INDEX < COUNT (a Kubernetes Indexed Job sets "
                + "JOB_COMPLETION_INDEX, the manifest JOB_COMPLETION_COUNT; a Slurm array task's SLURM_ARRAY_TASK_ID "
                + "is the index of NETRUNNER_SHARD_COUNT)."
        case .badShardEnvironment(let reason):
            "\(reason) (A Slurm array task's shard: with NETRUNNER_SHARD_COUNT=N exported, as deploy/slurm/*.sbatch "
                + "do, SLURM_ARRAY_TASK_ID is the shard index, 0 to N-1, so scontrol requeue JOBID_K and sbatch "
                + "--array=K both rerun shard K; without it, the task's place in a dense array, (ID - MIN) / STEP of "
                + "SLURM_ARRAY_TASK_COUNT.)"
        case .unmergeable(let file, let reason):
            "\(file): cannot merge it: \(reason)"
        }
    }
}

extension EvaluationError: CustomStringConvertible {
    /// The same text as ``errorDescription``.
    public var description: String { errorDescription ?? "Evaluation error." }
}
