import Foundation
import NetRunnerTestSupport
import Testing

@testable import NetRunner

/// Thousands of corrupted model.json files: each parses or throws a ModelBundleError, never
/// crashes or hangs.
@Suite("Corrupted model.json files")
struct ModelDescriptionFuzzTests {
    @Test("5000 mutated descriptions parse or throw ModelBundleError")
    func fuzz() throws {
        let seed = Array(ModelBundleTests.seedJSON.utf8)
        var generator = SeededGenerator(seed: 0x6D6F_6465_6C6A_736F)
        let alphabet = Array("{}[]\",:0123456789-.eE truefalsenull\\/u\n".utf8)
        var parsed = 0
        var rejected = 0
        for _ in 0..<5000 {
            var bytes = seed
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                guard !bytes.isEmpty else { break }
                let position = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: bytes[position] = alphabet.randomElement(using: &generator) ?? 0
                case 1: bytes.remove(at: position)
                case 2: bytes.insert(alphabet.randomElement(using: &generator) ?? 0, at: position)
                default: bytes = Array(bytes.prefix(position))
                }
            }
            do {
                _ = try ModelDescription.parse(Data(bytes), source: "fuzz.json")
                parsed += 1
            } catch {
                rejected += 1
            }
        }
        print("model.json fuzz: \(parsed) parsed, \(rejected) rejected")
        #expect(parsed + rejected == 5000)
        #expect(rejected > 1000)
    }

    @Test("Deep nesting and huge numbers are refused or parsed, not crashed on")
    func hostile() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: ModelBundleError.self) { try ModelDescription.parse(Data(deep.utf8)) }
        let huge = ModelBundleTests.seedJSON.replacingOccurrences(of: "[224,224,3]", with: "[1e300,224,3]")
        #expect(throws: ModelBundleError.self) { try ModelDescription.parse(Data(huge.utf8)) }
    }
}
