import Foundation
import NetRunnerTestSupport
import Testing

@testable import NetRunner

/// Issue 54, finding 9, fuzzed: index files with their bytes mutated.
///
/// The files are `.nrindex` files written by ``EmbeddingIndex/write(to:)``; the mutations: the dimension, the count and the text lengths set to extremes, values
/// replaced by NaN, infinities, 3e38, zeros and subnormals, bits flipped, the file cut or
/// grown. Each is refused with ``NetRunnerError`` or opened, and an opened index holds what a
/// search needs: as many paths as embeddings, each embedding a unit vector, every similarity a
/// number in -1...1.
///
/// The corpus is seeded: `#index` names the same bytes every run.
@Suite("Fuzzing the index reader")
struct IndexReaderFuzzTests {
    /// An index of `count` unit vectors of `dimension` values, as bytes.
    static func original(count: Int, dimension: Int, using random: inout SeededGenerator) throws -> [UInt8] {
        var index = EmbeddingIndex(dimension: dimension, model: "fuzz-model")
        for row in 0..<count {
            let values = (0..<dimension).map { _ in Float.random(in: -1...1, using: &random) }
            try index.add(path: "photos/\(row)-café.jpg", embedding: values)
        }
        let path = NSTemporaryDirectory() + "netrunner-index-fuzz-\(UUID().uuidString).nrindex"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try index.write(to: path)
        return try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// One of `values`, chosen by `random`.
    static func pick<Value>(_ values: [Value], using random: inout SeededGenerator) -> Value {
        values[Int.random(in: 0..<values.count, using: &random)]
    }

    static let mutations = [
        "dimension", "count", "model length", "a value", "bit flips", "cut", "grown", "a path length",
    ]

    /// Mutates `bytes` (laid out as `NRINDEX1`, dimension u32, count u64, model length u32, the
    /// model, the values, then each path's u32 length and bytes); returns the mutation's index.
    static func mutate(
        _ bytes: inout [UInt8], dimension: Int, count: Int, using random: inout SeededGenerator
    ) -> Int {
        func put(_ value: UInt64, at offset: Int, width: Int) {
            for index in 0..<width where offset + index < bytes.count {
                bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index))
            }
        }
        let extremes: [UInt64] = [0, 1, 2, 7, 15, 17, 65_536, 65_537, 0x7FFF_FFFF, 0xFFFF_FFFF, 50_000_001, 1 << 62]
        let valuesStart = 8 + 4 + 8 + 4 + "fuzz-model".utf8.count
        let pathsStart = valuesStart + 4 * count * dimension
        let kind = Int.random(in: 0..<mutations.count, using: &random)
        switch kind {
        case 0:
            let near = UInt64(dimension) &+ UInt64(bitPattern: Int64.random(in: -2...2, using: &random))
            put(Self.pick(extremes + [near], using: &random), at: 8, width: 4)
        case 1:
            let near = UInt64(count) &+ UInt64(bitPattern: Int64.random(in: -2...2, using: &random))
            put(Self.pick(extremes + [near, UInt64.max], using: &random), at: 12, width: 8)
        case 2:
            put(Self.pick(extremes + [9, 11], using: &random), at: 20, width: 4)
        case 3:
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let values: [Float] = [
                    .nan, .infinity, -.infinity, 3e38, -3e38, 0, -0.0, .leastNonzeroMagnitude,
                    .leastNormalMagnitude / 128, 1, 2, Float.random(in: -1...1, using: &random),
                ]
                let value = Self.pick(values, using: &random)
                let at = valuesStart + 4 * Int.random(in: 0..<(count * dimension), using: &random)
                put(UInt64(value.bitPattern), at: at, width: 4)
            }
        case 4:
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                let bit = UInt8(1 << Int.random(in: 0..<8, using: &random))
                bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= bit
            }
        case 5:
            bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &random)))
        case 6:
            bytes += (0..<Int.random(in: 1...64, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
        default:
            put(Self.pick(extremes + [0, 3, 200], using: &random), at: pathsStart, width: 4)
        }
        return kind
    }

    @Test("400 mutated index files: opened with unit vectors and numbers for similarities, or refused")
    func mutatedIndexes() throws {
        var random = SeededGenerator(seed: 0x4E52_4958)
        let dimension = 16
        let count = 12
        let original = try Self.original(count: count, dimension: dimension, using: &random)
        let path = NSTemporaryDirectory() + "netrunner-index-fuzz-\(UUID().uuidString).nrindex"
        defer { try? FileManager.default.removeItem(atPath: path) }
        var outcomes: [String: Int] = [:]
        var kinds = [Int](repeating: 0, count: Self.mutations.count)
        let cases = 400
        for index in 0..<cases {
            var bytes = original
            let kind = Self.mutate(&bytes, dimension: dimension, count: count, using: &random)
            kinds[kind] += 1
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let read: EmbeddingIndex
            do {
                read = try EmbeddingIndex.read(from: path)
            } catch let error as NetRunnerError {
                #expect("\(error)".contains("is not a NetRunner similarity index"), "#\(index): \(error)")
                outcomes["refused", default: 0] += 1
                continue
            }
            outcomes["opened", default: 0] += 1
            #expect(read.dimension >= 1 && read.dimension <= EmbeddingIndex.maximumDimension, "#\(index)")
            #expect(read.vectorBytes == read.count * read.dimension * 4, "#\(index)")
            for row in 0..<read.count {
                let squared = read.embedding(at: row).reduce(Double(0)) { $0 + Double($1) * Double($1) }
                #expect(abs(squared - 1) <= Double(EmbeddingIndex.unitTolerance), "#\(index) row \(row): \(squared)")
            }
            guard read.count > 0 else { continue }
            let query = read.embedding(at: Int.random(in: 0..<read.count, using: &random))
            let matches = try read.search(query, k: read.count)
            #expect(matches.count == read.count, "#\(index)")
            #expect(matches.allSatisfy { $0.similarity.isFinite && abs($0.similarity) <= 1.001 }, "#\(index)")
            #expect(zip(matches, matches.dropFirst()).allSatisfy { $0.similarity >= $1.similarity }, "#\(index)")
            for group in read.duplicateGroups(threshold: 0.99) {
                #expect(group.leastSimilarity.isFinite && group.pairs.allSatisfy(\.similarity.isFinite), "#\(index)")
            }
        }
        let summary = outcomes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        let mutated = zip(Self.mutations, kinds).map { "\($0) \($1)" }.joined(separator: ", ")
        print("Index reader fuzz: \(cases) files (\(mutated)): \(summary)")
        #expect(kinds.allSatisfy { $0 > 0 })
        // Most edits break a file; a grown path's tail or a value kept a unit leaves it whole
        // (measured: 9 of 400).
        #expect(outcomes["opened", default: 0] >= cases / 100, "\(summary)")
        #expect(outcomes["refused", default: 0] >= cases / 2, "\(summary)")
    }
}
