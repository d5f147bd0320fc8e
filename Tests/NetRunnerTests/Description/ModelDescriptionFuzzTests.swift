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
        var generator = SeededGenerator(seed: 0x6D6F_6465_6C6A_736F)
        var parsed = 0
        var rejected = 0
        for _ in 0..<5000 {
            let bytes = mutatedJSON(ModelBundleTests.seedJSON, using: &generator)
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
