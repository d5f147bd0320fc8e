import Testing

@testable import NetRunner

/// `EmbeddingIndex.duplicateGroups(threshold:)`: the groups, counts and pairs a brute-force
/// reference over every pair gives, and memory that does not grow with the pairs.
@Suite("Near-duplicate groups")
struct DuplicateGroupsTests {
    /// A deterministic index of `count` unit vectors of `dimension` values: `clusters` tight
    /// clusters (small noise around a centre) and single points between them.
    static func index(count: Int, dimension: Int, clusters: Int, seed: UInt64) throws -> EmbeddingIndex {
        var state = seed
        func random() -> Float {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Float(state >> 40) / Float(1 << 24) - 0.5
        }
        let centres = (0..<clusters).map { _ in (0..<dimension).map { _ in random() } }
        var index = EmbeddingIndex(dimension: dimension, model: "test")
        for item in 0..<count {
            let values: [Float]
            if item % 3 == 2 {
                values = (0..<dimension).map { _ in random() }
            } else {
                values = centres[item % clusters].map { $0 + 0.05 * random() }
            }
            try index.add(path: "p\(item)", embedding: values)
        }
        return index
    }

    /// The groups as every pair gives them: union-find over all pairs at or above the threshold.
    static func reference(_ index: EmbeddingIndex, threshold: Float) -> [EmbeddingIndex.DuplicateGroup] {
        let rows = index.count
        let vectors = (0..<rows).map { index.embedding(at: $0) }
        var parent = Array(0..<rows)
        func root(_ item: Int) -> Int { parent[item] == item ? item : root(parent[item]) }
        var pairs: [EmbeddingIndex.DuplicateGroup.Pair] = []
        for a in 0..<rows {
            for b in (a + 1)..<rows {
                let similarity = zip(vectors[a], vectors[b]).reduce(Float(0)) { $0 + $1.0 * $1.1 }
                guard similarity >= threshold else { continue }
                pairs.append(.init(a: a, b: b, similarity: similarity))
                let (ra, rb) = (root(a), root(b))
                if ra != rb { parent[max(ra, rb)] = min(ra, rb) }
            }
        }
        var groups: [Int: EmbeddingIndex.DuplicateGroup] = [:]
        for pair in pairs {
            var group = groups[root(pair.a)] ?? .init(members: [], pairs: [], pairCount: 0, leastSimilarity: 1)
            group.members += [pair.a, pair.b]
            group.pairCount += 1
            group.leastSimilarity = min(group.leastSimilarity, pair.similarity)
            groups[root(pair.a)] = group
        }
        return groups.values.map { group in
            var group = group
            group.members = Array(Set(group.members)).sorted()
            // Each member's most similar partner (ties: the lower), each pair once.
            var best: Set<[Int]> = []
            for member in group.members {
                let mine = pairs.filter { $0.a == member || $0.b == member }
                let top = mine.max {
                    $0.similarity != $1.similarity
                        ? $0.similarity < $1.similarity
                        : ($0.a == member ? $0.b : $0.a) > ($1.a == member ? $1.b : $1.a)
                }
                if let top { best.insert([top.a, top.b]) }
            }
            group.pairs = best.sorted { ($0[0], $0[1]) < ($1[0], $1[1]) }.compactMap { key in
                pairs.first { $0.a == key[0] && $0.b == key[1] }
            }
            return group
        }
        .sorted {
            $0.members.count != $1.members.count ? $0.members.count > $1.members.count : $0.members[0] < $1.members[0]
        }
    }

    @Test("the groups, counts, least similarities and best pairs of every pair", arguments: [0.9, 0.97, 0.995])
    func againstEveryPair(threshold: Float) throws {
        let index = try Self.index(count: 300, dimension: 16, clusters: 7, seed: 11)
        let groups = index.duplicateGroups(threshold: threshold)
        let expected = Self.reference(index, threshold: threshold)
        #expect(!expected.isEmpty)
        #expect(groups.map(\.members) == expected.map(\.members))
        #expect(groups.map(\.pairCount) == expected.map(\.pairCount))
        for (got, want) in zip(groups, expected) {
            #expect(abs(got.leastSimilarity - want.leastSimilarity) < 1e-5)
            #expect(got.pairs.map { [$0.a, $0.b] } == want.pairs.map { [$0.a, $0.b] })
        }
    }

    /// Issue 54: 6,000 copies of one embedding kept 18 million pairs (1.98 GB) before grouping,
    /// 12,000 asked for 3.2 GB and aborted. Now one group, its pairs counted, one best pair per
    /// member at most.
    @Test("copies of one photo: one group, its pairs counted, not kept")
    func copies() throws {
        let copies = 6_000
        var index = EmbeddingIndex(dimension: 2, model: "test")
        for item in 0..<copies { try index.add(path: "copy\(item)", embedding: [1, 0]) }
        try index.add(path: "other", embedding: [0, 1])
        let groups = index.duplicateGroups(threshold: 0.98)
        #expect(groups.count == 1)
        #expect(groups.first?.members == Array(0..<copies))
        #expect(groups.first?.pairCount == copies * (copies - 1) / 2)
        #expect(groups.first?.leastSimilarity == 1)
        // Every copy's best partner is the lowest other copy: copy 0 with copy 1, every other with 0.
        #expect(groups.first?.pairs.count == copies - 1)
        #expect(groups.first?.pairs.allSatisfy { $0.a == 0 } == true)
    }
}
