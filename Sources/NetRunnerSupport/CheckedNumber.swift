/// Why a number from outside the process (JSON, a header, a query, a flag, a file) was refused:
/// what it is, what was given, and the range it must be in.
package struct NumberOutOfRange: Error, Equatable, Sendable, CustomStringConvertible {
    /// What the number is, as the user knows it (`"binary_data_size"`, `"--threads"`, `"weight"`).
    package let name: String
    /// The value as given (a JSON number as written, a header's text).
    package let given: String
    /// The smallest value allowed.
    package let lowest: Int
    /// The largest value allowed.
    package let highest: Int

    package init(name: String, given: String, lowest: Int, highest: Int) {
        self.name = name
        self.given = given
        self.lowest = lowest
        self.highest = highest
    }

    /// A message a user can act on, such as
    /// "binary_data_size must be a whole number from 0 to 1073741824; got 1e+30.".
    package var description: String {
        "\(name) must be a whole number from \(lowest) to \(highest); got \(given)."
    }
}

/// The one checked conversion for numbers that come from outside.
///
/// Numbers from JSON, headers, query strings, command-line flags and files. Every conversion has
/// a limit, never traps (Swift traps on an overflowing `*` or on `Int(1e30)`, and a trap ends the
/// process), and refuses with a ``NumberOutOfRange`` that names the number.
package enum CheckedNumber {
    /// A whole number from a JSON number (which arrives as a `Double`): refuses NaN, infinities,
    /// fractions and values outside `range`.
    package static func integer(_ value: Double, _ name: String, in range: ClosedRange<Int>) throws(NumberOutOfRange)
        -> Int
    {
        // Double(Int.max) rounds up to 2^63, so compare against the bounds as Doubles and then
        // convert with the failable initializer, which refuses what does not fit.
        guard value.isFinite, value.rounded(.towardZero) == value,
            value >= Double(range.lowerBound), value <= Double(range.upperBound),
            let whole = Int(exactly: value), range.contains(whole)
        else {
            throw NumberOutOfRange(name: name, given: "\(value)", lowest: range.lowerBound, highest: range.upperBound)
        }
        return whole
    }

    /// A whole number from text (a header, a query item, a flag, a line of a file): optional
    /// sign and decimal digits only, no spaces, within `range`.
    package static func integer(_ text: some StringProtocol, _ name: String, in range: ClosedRange<Int>)
        throws(NumberOutOfRange) -> Int
    {
        guard text.utf8.count <= 40, let value = Int(text), range.contains(value) else {
            throw NumberOutOfRange(
                name: name, given: "\"\(text.prefix(40))\"", lowest: range.lowerBound, highest: range.upperBound)
        }
        return value
    }

    /// An integer already parsed (an element of a JSON array decoded as `Int`, a flag), within `range`.
    package static func integer(_ value: Int, _ name: String, in range: ClosedRange<Int>) throws(NumberOutOfRange)
        -> Int
    {
        guard range.contains(value) else {
            throw NumberOutOfRange(name: name, given: "\(value)", lowest: range.lowerBound, highest: range.upperBound)
        }
        return value
    }

    /// The product of `factors` (a tensor shape's element count, a width times a height), each
    /// factor in `0...limit` and the product at most `limit`; never overflows.
    package static func product(_ factors: some Sequence<Int>, _ name: String, limit: Int) throws(NumberOutOfRange)
        -> Int
    {
        var product = 1
        var text: [String] = []
        var refused = false
        for factor in factors {
            text.append("\(factor)")
            guard !refused, factor >= 0, factor <= limit else {
                refused = true
                continue
            }
            let (next, overflow) = product.multipliedReportingOverflow(by: factor)
            if overflow || next > limit { refused = true } else { product = next }
        }
        guard !refused else {
            let given =
                text.count > 8 ? text.prefix(8).joined(separator: " x ") + " x ..." : text.joined(separator: " x ")
            throw NumberOutOfRange(name: name, given: given, lowest: 0, highest: limit)
        }
        return product
    }

    /// The sum of `terms` (weights, byte counts), each term in `0...limit` and the sum at most
    /// `limit`; never overflows.
    ///
    /// A sum over `limit` is refused with the terms and their sum (`got 90 + 20 = 110`), a term
    /// outside `0...limit` with that term (`got a term of -1`).
    package static func sum(_ terms: some Sequence<Int>, _ name: String, limit: Int) throws(NumberOutOfRange) -> Int {
        var sum = 0
        var overflow = false
        var shown: [String] = []
        var count = 0
        for term in terms {
            guard term >= 0, term <= limit else {
                throw NumberOutOfRange(name: name, given: "a term of \(term)", lowest: 0, highest: limit)
            }
            count += 1
            if shown.count < 8 { shown.append(String(term)) }
            let (next, overflowed) = sum.addingReportingOverflow(term)
            if overflowed { overflow = true } else { sum = next }
        }
        guard !overflow, sum <= limit else {
            let terms = shown.joined(separator: " + ") + (count > shown.count ? " + ... (\(count) terms)" : "")
            throw NumberOutOfRange(
                name: name, given: "\(terms) = \(overflow ? "more than \(Int.max)" : String(sum))", lowest: 0,
                highest: limit)
        }
        return sum
    }
}
