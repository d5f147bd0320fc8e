import Testing

@testable import NetRunnerSupport

/// Numbers from outside: one conversion with a limit, never a trap.
@Suite("CheckedNumber")
struct CheckedNumberTests {
    @Test(
        "JSON numbers that are not whole, not finite or out of range are refused, never trapped on",
        arguments: [
            Double.nan, .infinity, -.infinity, 1e30, -1e30, 9_223_372_036_854_775_807.0, 1e13, 0.5, -1, 2049,
            Double.greatestFiniteMagnitude, -Double.greatestFiniteMagnitude,
        ])
    func refusedDoubles(value: Double) {
        #expect(throws: NumberOutOfRange.self) { try CheckedNumber.integer(value, "count", in: 0...2048) }
    }

    @Test("Whole JSON numbers in range come back exactly, the bounds included")
    func acceptedDoubles() throws {
        #expect(try CheckedNumber.integer(0.0, "count", in: 0...2048) == 0)
        #expect(try CheckedNumber.integer(2048.0, "count", in: 0...2048) == 2048)
        #expect(try CheckedNumber.integer(-0.0, "count", in: 0...2048) == 0)
        #expect(try CheckedNumber.integer(Double(1 << 53), "n", in: 0...Int.max) == 1 << 53)
        // The widest range: 2^63 (what Double(Int.max) rounds to) is one past Int.max and refused.
        #expect(throws: NumberOutOfRange.self) {
            try CheckedNumber.integer(9.223372036854775808e18, "n", in: .min ... .max)
        }
        #expect(try CheckedNumber.integer(-9.223372036854775808e18, "n", in: .min ... .max) == .min)
    }

    @Test(
        "Text is a sign and digits within the range, nothing else",
        arguments: ["", " 1", "1 ", "+", "-", "0x10", "1e3", "1.0", "99999999999999999999", "-1", "4097", "١٢"])
    func refusedText(text: String) {
        #expect(throws: NumberOutOfRange.self) { try CheckedNumber.integer(text, "Content-Length", in: 0...4096) }
    }

    @Test("Accepted text")
    func acceptedText() throws {
        #expect(try CheckedNumber.integer("4096", "n", in: 0...4096) == 4096)
        #expect(try CheckedNumber.integer("+7", "n", in: 0...4096) == 7)
        #expect(try CheckedNumber.integer("007", "n", in: 0...4096) == 7)
    }

    @Test("Products: a shape's element count never overflows, and its limit holds")
    func products() throws {
        #expect(try CheckedNumber.product([1, 224, 224, 3], "shape", limit: 1 << 30) == 150_528)
        #expect(try CheckedNumber.product([], "shape", limit: 10) == 1)
        #expect(throws: NumberOutOfRange.self, "each factor has the limit too") {
            try CheckedNumber.product([0, Int.max], "shape", limit: 10)
        }
        for shape in [
            [4_611_686_018_427_387_904, 4], [Int.max, Int.max], [-1, 4], [1 << 31, 1 << 31], [1 << 20, 1 << 11],
        ] {
            #expect(throws: NumberOutOfRange.self, "\(shape)") {
                try CheckedNumber.product(shape, "shape", limit: 1 << 30)
            }
        }
        let error = #expect(throws: NumberOutOfRange.self) {
            try CheckedNumber.product([4_611_686_018_427_387_904, 4], "shape of \"input\"", limit: 1 << 30)
        }
        #expect(
            error?.description
                == "shape of \"input\" must be a whole number from 0 to 1073741824; got 4611686018427387904 x 4.")
    }

    @Test("Sums: weights that together pass the limit are refused")
    func sums() throws {
        #expect(try CheckedNumber.sum([1, 2, 3], "weights", limit: 100) == 6)
        #expect(throws: NumberOutOfRange.self) { try CheckedNumber.sum([Int.max, 1], "weights", limit: .max) }
        #expect(throws: NumberOutOfRange.self) { try CheckedNumber.sum([60, 41], "weights", limit: 100) }
        #expect(throws: NumberOutOfRange.self) { try CheckedNumber.sum([-1, 2], "weights", limit: 100) }
    }

    @Test("A sum past the limit is refused with its terms and the sum, not the last term alone")
    func sumMessages() {
        let message = { (terms: [Int], limit: Int) -> String? in
            do throws(NumberOutOfRange) {
                _ = try CheckedNumber.sum(terms, "the weights' sum", limit: limit)
                return nil
            } catch {
                return error.description
            }
        }
        #expect(message([90, 20], 100) == "the weights' sum must be a whole number from 0 to 100; got 90 + 20 = 110.")
        #expect(message([-1, 2], 100) == "the weights' sum must be a whole number from 0 to 100; got a term of -1.")
        #expect(
            message([Int.max, 1], Int.max)
                == "the weights' sum must be a whole number from 0 to \(Int.max); got \(Int.max) + 1 = more than \(Int.max)."
        )
        #expect(
            message(Array(repeating: 20, count: 10), 100)?.hasSuffix(
                "got 20 + 20 + 20 + 20 + 20 + 20 + 20 + 20 + ... (10 terms) = 200.") == true)
    }
}
