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

    /// The shard of a Kubernetes Indexed Job's pod: `JOB_COMPLETION_INDEX` (set by Kubernetes)
    /// of `JOB_COMPLETION_COUNT` (set by the manifest), or `nil` when the index is not set.
    ///
    /// - Returns: The shard.
    /// - Throws: ``EvaluationError/badShard(_:)`` when the index is set without a valid count.
    public static func fromEnvironment() throws(EvaluationError) -> BulkShard? {
        guard let index = variable("JOB_COMPLETION_INDEX") else { return nil }
        return try BulkShard(parsing: index + "/" + (variable("JOB_COMPLETION_COUNT") ?? ""))
    }

    /// The shard a command runs: its `--shard` option when given, else the Indexed Job's
    /// (``fromEnvironment()``), else `nil` (the whole run).
    ///
    /// - Parameter option: The `--shard` value, if any.
    /// - Returns: The shard.
    /// - Throws: ``EvaluationError/badShard(_:)`` for a malformed option or environment.
    public static func chosen(option: String?) throws(EvaluationError) -> BulkShard? {
        if let option { return try BulkShard(parsing: option) }
        return try fromEnvironment()
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

    /// The path under the longest root it lies under (the file name for a root that is the file).
    static func relative(_ path: String, roots: [String]) -> String {
        for root in roots.map({ $0.count > 1 && $0.hasSuffix("/") ? String($0.dropLast()) : $0 })
            .sorted(by: { $0.count > $1.count })
        {
            if path.hasPrefix(root + "/") { return String(path.dropFirst(root.count + 1)) }
            if path == root { return String(path.split(separator: "/").last ?? Substring(path)) }
        }
        return path
    }

    private static func variable(_ name: String) -> String? {
        guard let value = getenv(name), value.pointee != 0 else { return nil }
        return String(cString: value)
    }
}
