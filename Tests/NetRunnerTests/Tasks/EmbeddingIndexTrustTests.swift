import Foundation
import Testing

@testable import NetRunner

/// Issue 54, finding 9: an index file's embeddings are not trusted. Each must be a unit vector
/// (else the file is refused, naming the embedding's position and photo), a query is
/// normalised in `Double`, and a similarity that is no number never ranks above one.
@Suite("An index's embeddings checked")
struct EmbeddingIndexTrustTests {
    /// An index file written byte by byte, as `EmbeddingIndex.write(to:)` lays it out, holding
    /// whatever vectors it is given.
    static func indexFile(_ vectors: [[Float]], paths: [String], dimension: Int) -> Data {
        var data = Data("NRINDEX1".utf8)
        func append<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
        }
        func text(_ value: String) {
            append(UInt32(value.utf8.count))
            data.append(contentsOf: Array(value.utf8))
        }
        append(UInt32(dimension))
        append(UInt64(vectors.count))
        text("test")
        for vector in vectors { for value in vector { append(value.bitPattern) } }
        for path in paths { text(path) }
        return data
    }

    static func reason(_ error: any Error) -> String {
        guard case NetRunnerError.invalidOption(_, let reason) = error else { return "\(error)" }
        return reason
    }

    @Test(
        "A file holding an embedding that is no unit vector is refused, naming its position and photo",
        arguments: [
            ("huge", [Float](repeating: 3e38, count: 8), "has a length of"),
            ("not a number", [1, .nan, 0, 0, 0, 0, 0, 0], "not a number"),
            ("infinite", [1, .infinity, 0, 0, 0, 0, 0, 0], "not a number"),
            ("zero", [Float](repeating: 0, count: 8), "all zeros"),
            ("subnormal", [Float](repeating: .leastNormalMagnitude / 128, count: 8), "has a length of"),
            ("too long", [Float](repeating: 1, count: 8), "has a length of"),
        ])
    func refusesNonUnitVectors(name: String, vector: [Float], words: String) throws {
        let unit = [Float](repeating: 1 / Float(8).squareRoot(), count: 8)
        let path = NSTemporaryDirectory() + "netrunner-trust-\(UUID().uuidString).nrindex"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Self.indexFile([unit, vector, unit], paths: ["a.jpg", "evil.jpg", "c.jpg"], dimension: 8)
            .write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: NetRunnerError.self, "\(name)") { try EmbeddingIndex.read(from: path) }
        let reason = error.map(Self.reason) ?? ""
        #expect(reason.contains("embedding 2 of 3 (evil.jpg)") && reason.contains(words), "\(name): \(reason)")

        // Unit vectors read, and search answers numbers.
        try Self.indexFile([unit, unit, unit], paths: ["a.jpg", "b.jpg", "c.jpg"], dimension: 8)
            .write(to: URL(fileURLWithPath: path))
        let index = try EmbeddingIndex.read(from: path)
        #expect(try index.search(unit, k: 3).allSatisfy { abs($0.similarity - 1) < 1e-5 })
    }

    @Test("A query of huge or subnormal values is normalised exactly; one of zeros or NaN is refused")
    func queries() throws {
        var index = EmbeddingIndex(dimension: 4, model: "test")
        try index.add(path: "x", embedding: [1, 0, 0, 0])
        try index.add(path: "xy", embedding: [1, 1, 0, 0])
        try index.add(path: "huge", embedding: [3e38, 3e38, 3e38, 0])
        try index.add(path: "tiny", embedding: [.leastNonzeroMagnitude * 7, 0, 0, .leastNonzeroMagnitude * 7])
        #expect(index.embedding(at: 2).map { abs($0 - 1 / Float(3).squareRoot()) < 1e-6 } == [true, true, true, false])
        let half: [Float] = [0.707_106_8, 0, 0, 0.707_106_8]
        #expect(zip(index.embedding(at: 3), half).allSatisfy { abs($0 - $1) < 1e-6 })
        for query: [Float] in [
            [1e20, 1e20, 0, 0], [3e-23, 3e-23, 0, 0], [.leastNormalMagnitude / 128, .leastNormalMagnitude / 128, 0, 0],
        ] {
            let matches = try index.search(query, k: 4)
            #expect(matches.first?.path == "xy" && abs((matches.first?.similarity ?? 0) - 1) < 1e-6, "\(query)")
            #expect(matches.allSatisfy { $0.similarity.isFinite && $0.similarity <= 1.000_001 }, "\(query)")
        }
        #expect(throws: NetRunnerError.self) { try index.search([0, 0, 0, 0], k: 1) }
        #expect(throws: NetRunnerError.self) { try index.search([.nan, 1, 0, 0], k: 1) }
    }

    @Test("A similarity that is no number ranks below every number")
    func ranking() {
        let items: [(index: Int, similarity: Float)] = [
            (0, .nan), (1, -0.5), (2, .infinity), (3, 0.9), (4, -.infinity),
        ]
        let sorted = items.sorted { EmbeddingIndex.ranksAbove($0, $1) }
        #expect(sorted.map(\.index) == [3, 1, 0, 2, 4])
    }
}
