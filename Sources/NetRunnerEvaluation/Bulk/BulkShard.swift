import NetRunnerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One part of a bulk run split over machines: shard `index` of `count`.
///
/// An image belongs to the shard its path under its folder hashes to (FNV-1a, 64 bits, of the
/// path's UTF-8 bytes, modulo `count`): the same on every machine whatever the folder is mounted
/// as, balanced for any real collection, and stable when files are added (an added file never
/// moves another to a different shard, so finished shards stay finished).
///
///     let shard = try BulkShard(parsing: "2/8")        // --shard 2/8
///     let mine = files.filter { shard.contains($0, roots: ["photos"]) }
public struct BulkShard: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The shard, from 0.
    public let index: Int
    /// The number of shards, 1 or more.
    public let count: Int

    /// Creates a shard.
    ///
    /// - Parameters:
    ///   - index: The shard, `0..<count`.
    ///   - count: The number of shards.
    /// - Throws: ``EvaluationError/badShard(_:)`` when `index` is not in `0..<count`.
    public init(index: Int, count: Int) throws(EvaluationError) {
        guard count >= 1, count <= 1_000_000, index >= 0, index < count else {
            throw .badShard("\(index)/\(count)")
        }
        self.index = index
        self.count = count
    }

    /// Reads `I/N` (`--shard 2/8`).
    ///
    /// - Parameter text: The shard as `index/count`.
    /// - Throws: ``EvaluationError/badShard(_:)`` for anything else.
    public init(parsing text: String) throws(EvaluationError) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else { throw .badShard(text) }
        try self.init(index: index, count: count)
    }

    /// The shard the environment gives, or `nil` when it gives none (the whole run).
    ///
    /// Read in this order, the first that is set deciding:
    ///
    /// 1. A Kubernetes Indexed Job's pod: `JOB_COMPLETION_INDEX` (set by Kubernetes) of
    ///    `JOB_COMPLETION_COUNT` (set by the manifest).
    /// 2. A Slurm job array's task, `SLURM_ARRAY_TASK_ID`:
    ///    - with `NETRUNNER_SHARD_COUNT=N` set (as `deploy/slurm/bulk.sbatch` exports it), the
    ///      task ID *is* the shard index, `0..<N`, whatever else the array holds. This is what
    ///      makes a rerun safe: `scontrol requeue JOBID_K` reruns task K of the same array, and
    ///      `sbatch --array=K` makes a new one-task array whose only task is K; both run shard K
    ///      of N, and both resume its file.
    ///    - without it, the shard is the task's place in a dense array: index
    ///      `(SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN) / SLURM_ARRAY_TASK_STEP` of
    ///      `SLURM_ARRAY_TASK_COUNT` (`--array=1-8` is 8 shards, task 1 shard 0). An array with
    ///      gaps (`--array=2,5`, or a count that is not `(MAX - MIN) / STEP + 1`) and a one-task
    ///      array (what `sbatch --array=K` makes to rerun task K: its place, 0 of 1, is not
    ///      shard K) are refused, as the shard they would run is not the one meant.
    ///
    /// `NETRUNNER_SHARD_COUNT` outside an array task names no shard (the merge jobs the scripts
    /// submit from the same environment run whole). Every number is checked (no overflow, no
    /// trap): task IDs in `0...4_000_000` (Slurm's largest `MaxArraySize` is 4,000,001), counts
    /// in `1...1_000_000`.
    ///
    /// - Parameter variable: Reads an environment variable (empty counts as unset); by default
    ///   the process's environment. Tests pass a dictionary's lookup.
    /// - Returns: The shard, or `nil` when no variable names one.
    /// - Throws: ``EvaluationError/badShard(_:)`` for a malformed Kubernetes index or count,
    ///   ``EvaluationError/badShardEnvironment(_:)`` for a Slurm array task that does not name
    ///   one shard.
    public static func fromEnvironment(_ variable: (String) -> String? = processVariable) throws(EvaluationError)
        -> BulkShard?
    {
        if let index = value("JOB_COMPLETION_INDEX", variable) {
            return try BulkShard(parsing: index + "/" + (value("JOB_COMPLETION_COUNT", variable) ?? ""))
        }
        return try slurmArrayTask(variable)
    }

    /// A variable's value, `nil` when it is unset or empty.
    private static func value(_ name: String, _ variable: (String) -> String?) -> String? {
        guard let value = variable(name), !value.isEmpty else { return nil }
        return value
    }

    /// The largest Slurm array task ID (Slurm's `MaxArraySize` is at most 4,000,001).
    static let largestTaskID = 4_000_000

    /// The largest shard count (as ``init(index:count:)`` allows).
    static let largestCount = 1_000_000

    /// The shard of a Slurm array task (see ``fromEnvironment(_:)``), or `nil` outside one.
    private static func slurmArrayTask(_ variable: (String) -> String?) throws(EvaluationError) -> BulkShard? {
        // Outside an array task (a merge job submitted from the same environment, a shell),
        // NETRUNNER_SHARD_COUNT names no shard: the whole run.
        guard let taskText = value("SLURM_ARRAY_TASK_ID", variable) else { return nil }
        let explicitCount = value(explicitCountVariable, variable)
        let taskID = try number(taskText, "SLURM_ARRAY_TASK_ID", in: 0...largestTaskID)
        if let explicitCount {
            let count = try number(explicitCount, explicitCountVariable, in: 1...largestCount)
            guard taskID < count else {
                throw .badShardEnvironment(
                    "SLURM_ARRAY_TASK_ID=\(taskID) is not a shard of \(explicitCountVariable)=\(count): with it, "
                        + "task IDs are the shard indices 0 to \(count - 1) (sbatch --array=0-\(count - 1)).")
            }
            return try BulkShard(index: taskID, count: count)
        }
        guard let countText = value("SLURM_ARRAY_TASK_COUNT", variable),
            let minText = value("SLURM_ARRAY_TASK_MIN", variable),
            let maxText = value("SLURM_ARRAY_TASK_MAX", variable)
        else {
            throw .badShardEnvironment(
                "SLURM_ARRAY_TASK_ID=\(taskID) is set without SLURM_ARRAY_TASK_COUNT, _MIN and _MAX.")
        }
        let count = try number(countText, "SLURM_ARRAY_TASK_COUNT", in: 1...largestCount)
        let lowest = try number(minText, "SLURM_ARRAY_TASK_MIN", in: 0...largestTaskID)
        let highest = try number(maxText, "SLURM_ARRAY_TASK_MAX", in: lowest...largestTaskID)
        let step = try number(
            value("SLURM_ARRAY_TASK_STEP", variable) ?? "1", "SLURM_ARRAY_TASK_STEP", in: 1...largestTaskID)
        let array =
            "--array=\(lowest)-\(highest)\(step == 1 ? "" : ":\(step)") with \(count) task\(count == 1 ? "" : "s")"
        guard count >= 2 else {
            throw .badShardEnvironment(
                "SLURM_ARRAY_TASK_ID=\(taskID) is the only task of its array (\(array)), as sbatch --array=\(taskID) "
                    + "makes to rerun one task: which shard of how many it is cannot be told from the array.")
        }
        // All within 0...4_000_000: no arithmetic here can overflow.
        guard (highest - lowest) % step == 0, (highest - lowest) / step + 1 == count, taskID >= lowest,
            taskID <= highest, (taskID - lowest) % step == 0
        else {
            throw .badShardEnvironment(
                "SLURM_ARRAY_TASK_ID=\(taskID) is in an array with gaps (\(array)), as a rerun of some tasks makes: "
                    + "its place in the array is not its shard.")
        }
        return try BulkShard(index: (taskID - lowest) / step, count: count)
    }

    /// The variable a Slurm batch script sets to say its array task IDs are shard indices of this
    /// many shards (see ``fromEnvironment(_:)``).
    public static let explicitCountVariable = "NETRUNNER_SHARD_COUNT"

    /// A whole number from the environment, within `range`, or a clear refusal.
    private static func number(_ text: String, _ name: String, in range: ClosedRange<Int>) throws(EvaluationError)
        -> Int
    {
        do {
            return try CheckedNumber.integer(text, name, in: range)
        } catch {
            throw .badShardEnvironment("\(error)")
        }
    }

    /// The shard a command runs: its `--shard` option when given, else the environment's
    /// (``fromEnvironment(_:)``: a Kubernetes Indexed Job's pod, then a Slurm array task), else
    /// `nil` (the whole run).
    ///
    /// - Parameters:
    ///   - option: The `--shard` value, if any.
    ///   - variable: Reads an environment variable; by default the process's environment.
    /// - Returns: The shard.
    /// - Throws: ``EvaluationError/badShard(_:)`` or ``EvaluationError/badShardEnvironment(_:)``
    ///   for a malformed option or environment.
    public static func chosen(option: String?, environment variable: (String) -> String? = processVariable)
        throws(EvaluationError) -> BulkShard?
    {
        if let option { return try BulkShard(parsing: option) }
        return try fromEnvironment(variable)
    }

    /// `index/count`.
    public var description: String { "\(index)/\(count)" }

    /// Whether an image belongs to this shard.
    ///
    /// - Parameters:
    ///   - path: The image's path, as listed.
    ///   - roots: The folders and files the run was given (the path is hashed relative to the
    ///     longest one it lies under, so mount points do not matter).
    /// - Returns: Whether this shard runs it.
    public func contains(_ path: String, roots: [String]) -> Bool {
        count == 1 || Self.shard(of: Self.relative(path, roots: roots), count: count) == index
    }

    /// The shard of a relative path among `count`.
    ///
    /// - Parameters:
    ///   - relativePath: The path under its folder.
    ///   - count: The number of shards.
    /// - Returns: The shard's index.
    public static func shard(of relativePath: String, count: Int) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in relativePath.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return Int(hash % UInt64(count))
    }

    /// The path under the longest root it lies under (the file name for a root that is the file):
    /// what ``contains(_:roots:)`` hashes.
    ///
    /// - Parameters:
    ///   - path: The image's path, as listed.
    ///   - roots: The folders and files the run was given.
    /// - Returns: The path relative to its root.
    package static func relative(_ path: String, roots: [String]) -> String {
        for root in roots.map({ $0.count > 1 && $0.hasSuffix("/") ? String($0.dropLast()) : $0 })
            .sorted(by: { $0.count > $1.count })
        {
            if path.hasPrefix(root + "/") { return String(path.dropFirst(root.count + 1)) }
            if path == root { return String(path.split(separator: "/").last ?? Substring(path)) }
        }
        return path
    }

    /// A variable of the process's environment, `nil` when unset.
    public static func processVariable(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
