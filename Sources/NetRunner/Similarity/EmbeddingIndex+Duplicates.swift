import Dispatch
import FoundationEssentials
import NetRunnerImage
import Synchronization

extension EmbeddingIndex {
    /// A group of near-duplicates: photos joined through pairs at or above a threshold.
    public struct DuplicateGroup: Sendable, Equatable {
        /// Two photos of the group, by position (`a < b`), and their similarity.
        public struct Pair: Sendable, Equatable {
            /// The first photo's position.
            public var a: Int
            /// The second photo's position.
            public var b: Int
            /// Their cosine similarity.
            public var similarity: Float
        }

        /// The group's photos, by position in the index, ascending.
        public var members: [Int]
        /// Each member's most similar other member (ties: the lower position), each pair once,
        /// sorted by position: at most one pair per member, however many pairs the group holds.
        public var pairs: [Pair]
        /// The number of pairs of the group at or above the threshold (`n * (n - 1) / 2` for `n`
        /// copies of one photo): counted, not kept.
        public var pairCount: Int
        /// The least similarity of those pairs.
        public var leastSimilarity: Float
    }

    /// Groups of near-duplicates among `rows` embeddings of `dimension` values (L2-normalised,
    /// one after another): every pair is compared (`rows * (rows - 1) / 2` dot products, on every
    /// core), and pairs at or above `threshold` join their photos in one group (union-find).
    ///
    /// Memory is linear in `rows` whatever the number of pairs: each worker hands the pairs it
    /// finds over in batches of at most ``duplicateBatch``, which update the groups, each
    /// photo's most similar partner, its least pair and its pair count; no pair is kept. (Before,
    /// every pair was kept: 12,000 copies of one photo asked for 3.2 GB.)
    ///
    /// - Parameters:
    ///   - vectors: At least `rows * dimension` values.
    ///   - rows: The embeddings.
    ///   - dimension: The values of each.
    ///   - threshold: The least cosine similarity of a pair.
    /// - Returns: The groups, largest first (ties: the lower first member).
    static func duplicateGroups(
        in vectors: UnsafeBufferPointer<Float>, rows: Int, dimension: Int, threshold: Float
    ) -> [DuplicateGroup] {
        // (Positions are kept as Int32: an index holds at most `maximumCount` embeddings.)
        guard rows > 1, rows <= Int(Int32.max), dimension > 0, vectors.count / dimension >= rows else { return [] }
        let groups = Mutex(GroupBuilder(rows: rows))
        let shared = SharedFloats(vectors)
        // Rows interleaved across the workers: row i compares with the rows after it.
        let workers = max(1, min(ProcessInfo.processInfo.activeProcessorCount, rows))
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            let all = shared.values
            var found: [DuplicateGroup.Pair] = []
            found.reserveCapacity(min(duplicateBatch, rows))
            var row = worker
            while row < rows {
                let query = UnsafeBufferPointer(rebasing: all[row * dimension..<(row + 1) * dimension])
                let similarities = DotProducts.of(query, with: all, rows: (row + 1)..<rows, dimension: dimension)
                // (A similarity that is no number never joins: JSON would write it `null`.)
                for (offset, similarity) in similarities.enumerated()
                where similarity.isFinite && similarity >= threshold {
                    found.append(.init(a: row, b: row + 1 + offset, similarity: similarity))
                    if found.count == duplicateBatch {
                        groups.withLock { $0.add(found) }
                        found.removeAll(keepingCapacity: true)
                    }
                }
                row += workers
            }
            groups.withLock { $0.add(found) }
        }
        return groups.withLock { $0.groups() }
    }

    /// The most pairs a worker holds before handing them over (a few MB).
    static let duplicateBatch = 65_536
}

/// The groups, built as pairs arrive in any order.
///
/// Union-find, and per photo its most similar partner, its least pair and the pairs it is the
/// first of: every answer is independent of the order.
private struct GroupBuilder {
    var parent: [Int32]
    var best: [(partner: Int32, similarity: Float)]
    var least: [Float]
    var firstOf: [Int]

    init(rows: Int) {
        parent = (0..<rows).map { Int32(truncatingIfNeeded: $0) }
        best = Array(repeating: (-1, -.infinity), count: rows)
        least = Array(repeating: .infinity, count: rows)
        firstOf = Array(repeating: 0, count: rows)
    }

    mutating func root(_ item: Int) -> Int {
        var item = item
        while Int(parent[item]) != item {
            parent[item] = parent[Int(parent[item])]
            item = Int(parent[item])
        }
        return item
    }

    mutating func add(_ pairs: [EmbeddingIndex.DuplicateGroup.Pair]) {
        for pair in pairs {
            let (ra, rb) = (root(pair.a), root(pair.b))
            if ra != rb { parent[max(ra, rb)] = Int32(truncatingIfNeeded: min(ra, rb)) }
            offer(pair.b, to: pair.a, pair.similarity)
            offer(pair.a, to: pair.b, pair.similarity)
            least[pair.a] = min(least[pair.a], pair.similarity)
            least[pair.b] = min(least[pair.b], pair.similarity)
            firstOf[pair.a] += 1
        }
    }

    /// `partner` becomes `member`'s best when more similar, or as similar and lower.
    mutating func offer(_ partner: Int, to member: Int, _ similarity: Float) {
        let current = best[member]
        if similarity > current.similarity || (similarity == current.similarity && partner < Int(current.partner)) {
            best[member] = (Int32(truncatingIfNeeded: partner), similarity)
        }
    }

    mutating func groups() -> [EmbeddingIndex.DuplicateGroup] {
        var byRoot: [Int: EmbeddingIndex.DuplicateGroup] = [:]
        for member in 0..<parent.count where best[member].partner >= 0 {
            let top = root(member)
            var group = byRoot[top] ?? .init(members: [], pairs: [], pairCount: 0, leastSimilarity: .infinity)
            group.members.append(member)
            group.pairCount += firstOf[member]
            group.leastSimilarity = min(group.leastSimilarity, least[member])
            let partner = Int(best[member].partner)
            group.pairs.append(
                .init(a: min(member, partner), b: max(member, partner), similarity: best[member].similarity))
            byRoot[top] = group
        }
        return byRoot.values.map { group in
            var group = group
            var pairs: [EmbeddingIndex.DuplicateGroup.Pair] = []
            for pair in group.pairs.sorted(by: { ($0.a, $0.b) < ($1.a, $1.b) })
            where pairs.last.map({ ($0.a, $0.b) != (pair.a, pair.b) }) ?? true {
                pairs.append(pair)
            }
            group.pairs = pairs
            return group
        }
        .sorted {
            $0.members.count != $1.members.count ? $0.members.count > $1.members.count : $0.members[0] < $1.members[0]
        }
    }
}

/// Floats read by several threads at once, none writing: safe to share.
private struct SharedFloats: @unchecked Sendable {
    let values: UnsafeBufferPointer<Float>

    init(_ values: UnsafeBufferPointer<Float>) {
        self.values = values
    }
}
