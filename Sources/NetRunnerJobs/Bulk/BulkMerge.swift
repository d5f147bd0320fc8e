import FoundationEssentials
import NetRunner
import NetRunnerEvaluation
import NetRunnerSupport

/// Joins the results of a bulk run's shards (each a ``BulkJob`` of one shard) into the one file a
/// single machine would have written: the same lines in the same order (each image once, in the
/// order of the folder walk), and the run's description beside it, so the merged file resumes and
/// reports like any other.
///
///     let summary = try BulkMerge.merge(["shard-0.jsonl", "shard-1.jsonl"], into: "results.jsonl")
///
/// Every shard must be there, once, from the same run (the same model, options and folders, as
/// their `.run.json` files say); an image in two shards, or in the wrong one, is refused.
package enum BulkMerge {
    /// What a merge joined.
    package struct Summary: Equatable, Sendable {
        /// The lines written.
        package var lines: Int
        /// The failed images among them.
        package var failures: Int
        /// The number of shards.
        package var shards: Int
    }

    /// Merges shard results into `output` (written atomically, with its run description).
    ///
    /// - Parameters:
    ///   - files: The shards' JSON Lines results files, in any order.
    ///   - output: The merged file.
    /// - Returns: What was merged.
    /// - Throws: ``BulkError/unmergeable(file:reason:)``, ``BulkError/noRunDescription(file:sidecar:)``
    ///   or ``BulkError/wholeRun(file:)`` naming the file and the problem; the results files'
    ///   errors.
    package static func merge(_ files: [String], into output: String) throws(BulkError) -> Summary {
        guard !files.isEmpty else { throw .unmergeable(file: output, reason: "no shard results were given") }
        if BulkResultsFile.Format.implied(by: output) == .csv {
            throw .unmergeable(file: output, reason: "merged results are JSON Lines (.jsonl)")
        }
        var identities: [(file: String, identity: BulkRunIdentity, shard: BulkShard)] = []
        for file in files {
            guard BulkResultsFile.Format.implied(by: file) != .csv else {
                throw .unmergeable(file: file, reason: "merge reads JSON Lines results (.jsonl), not CSV")
            }
            guard let identity = try BulkRunIdentity.read(for: file) else {
                throw .noRunDescription(file: file, sidecar: BulkRunIdentity.sidecar(for: file))
            }
            guard let text = identity[.shard] else {
                throw .wholeRun(file: file)
            }
            let shard: BulkShard
            do {
                shard = try BulkShard(parsing: text)
            } catch {
                throw .unmergeable(file: file, reason: "\(error)")
            }
            identities.append((file, identity, shard))
        }
        let first = identities[0]
        var whole = first.identity
        whole[.shard] = nil
        for other in identities.dropFirst() {
            var identity = other.identity
            identity[.shard] = nil
            let differences = identity.differences(from: whole)
            guard differences.isEmpty, identity.roots.map(\.typed) == whole.roots.map(\.typed) else {
                let what = differences.isEmpty ? ["the folders as typed"] : differences
                throw .unmergeable(
                    file: other.file,
                    reason: "it is from another run than \(first.file); what differs: " + what.joined(separator: "; "))
            }
            guard other.shard.count == first.shard.count else {
                throw .unmergeable(
                    file: other.file, reason: "it is shard \(other.shard) and \(first.file) is shard \(first.shard)")
            }
        }
        let count = first.shard.count
        var seen: [Int: String] = [:]
        for entry in identities {
            if let earlier = seen[entry.shard.index] {
                throw .unmergeable(file: entry.file, reason: "shard \(entry.shard) is also in \(earlier)")
            }
            seen[entry.shard.index] = entry.file
        }
        let missing = (0..<count).filter { seen[$0] == nil }
        guard missing.isEmpty else {
            throw .unmergeable(
                file: output,
                reason:
                    "shard\(missing.count == 1 ? "" : "s") \(missing.map { "\($0)/\(count)" }.joined(separator: ", ")) "
                    + "\(missing.count == 1 ? "is" : "are") missing")
        }
        let roots = whole.roots.map(\.typed)
        var lines: [(root: Int, image: String, line: Data)] = []
        var owner: [ExactString: String] = [:]
        var failures = 0
        let decoder = JSONDecoder()
        for entry in identities {
            for (number, line) in try BulkResultsFile.wholeLines(in: entry.file).enumerated() {
                let record: ResultsLine
                do {
                    record = try decoder.decode(ResultsLine.self, from: line)
                } catch {
                    throw .unmergeable(file: entry.file, reason: "line \(number + 1) is not a results line")
                }
                guard entry.shard.contains(record.image, roots: roots) else {
                    throw .unmergeable(
                        file: entry.file,
                        reason: "line \(number + 1) (\(record.image)) belongs to shard "
                            + "\(BulkShard.shard(of: BulkShard.relative(record.image, roots: roots), count: count))/\(count)"
                    )
                }
                if let earlier = owner[record.key] {
                    throw .unmergeable(file: entry.file, reason: "\(record.image) is also in \(earlier)")
                }
                owner[record.key] = entry.file
                if record.error != nil { failures += 1 }
                lines.append((rootIndex(of: record.image, roots: roots), record.image, line))
            }
        }
        // The order of a single run: the folders as given, each walked in sorted order.
        lines.sort { ($0.root, ExactString($0.image)) < ($1.root, ExactString($1.image)) }
        var merged = Data()
        for entry in lines {
            merged.append(entry.line)
            merged.append(UInt8(ascii: "\n"))
        }
        do {
            try FileIO.writeAtomically(merged, to: output)
        } catch {
            throw .unmergeable(file: output, reason: "\(error)")
        }
        try whole.write(for: output)
        return Summary(lines: lines.count, failures: failures, shards: count)
    }

    /// The position of the root an image was listed under (the longest that contains it).
    private static func rootIndex(of image: String, roots: [String]) -> Int {
        var best = (index: roots.count, length: -1)
        for (index, root) in roots.enumerated() {
            let trimmed = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
            if (image == trimmed || image.hasPrefix(trimmed + "/")) && trimmed.count > best.length {
                best = (index, trimmed.count)
            }
        }
        return best.index
    }
}
