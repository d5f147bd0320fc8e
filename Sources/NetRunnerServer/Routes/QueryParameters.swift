import Hummingbird
import NetRunnerSupport

/// A query parameter out of range, repeated or unknown: the client's mistake (400), with what
/// is wrong.
struct QueryParameterError: KindedFailure {
    /// What is wrong, for the client.
    var description: String
    /// A client's mistake: 400.
    var failureKind: FailureKind { .invalid }
}

/// The checked conversions of the query parameters every route reads.
enum QueryParameters {
    /// A whole number a query gives at most once, through a checked conversion.
    ///
    /// Digits only (no sign, no spaces), at most as many as the range's upper bound has, then
    /// the range: nothing a client sends can overflow or trap.
    ///
    /// - Parameters:
    ///   - name: The parameter.
    ///   - query: The request's query parameters.
    ///   - range: The values allowed.
    ///   - unit: What the number counts, for the message (`" of pixels"`), or empty.
    /// - Returns: The number, or `nil` when the query does not give it.
    /// - Throws: ``QueryParameterError`` naming the parameter and the range.
    static func wholeNumber(
        _ name: String, in query: Parameters, range: ClosedRange<Int>, unit: String = ""
    ) throws(QueryParameterError) -> Int? {
        let given = query.getAll(name)
        guard let text = given.first else { return nil }
        let rule = "a whole number\(unit) from \(range.lowerBound) to \(range.upperBound)"
        guard given.count == 1 else {
            throw QueryParameterError(description: "\(name) is given \(given.count) times: give it once, \(rule).")
        }
        let digits = String(range.upperBound).utf8.count
        guard text.utf8.count <= digits, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let value = Int(text),
            range.contains(value)
        else {
            throw QueryParameterError(description: "\(name) must be \(rule), not \"\(text.prefix(32))\".")
        }
        return value
    }

    /// Refuses a parameter the route does not take, and one given more than once.
    ///
    /// - Parameters:
    ///   - query: The request's query parameters.
    ///   - known: The parameters the route takes.
    /// - Throws: ``QueryParameterError`` naming the first other parameter and those it takes, or
    ///   the first repeated one.
    static func refuseUnknown(_ query: Parameters, known: [String]) throws(QueryParameterError) {
        for name in query.map({ String($0.key) }) where !known.contains(name) {
            let takes =
                known.count == 1 ? known[0] : known.dropLast().joined(separator: ", ") + " and " + (known.last ?? "")
            throw QueryParameterError(
                description: "Unknown query parameter \"\(name.prefix(64))\": this route takes \(takes).")
        }
        try refuseRepeated(query)
    }

    /// Refuses a parameter given more than once (`mask=image&mask=model`): which one was meant
    /// is the client's to say, not the server's to guess.
    ///
    /// - Parameters:
    ///   - query: The request's query parameters.
    ///   - lists: The parameters that may be repeated (a list's items).
    /// - Throws: ``QueryParameterError`` naming the first repeated parameter.
    static func refuseRepeated(_ query: Parameters, lists: Set<String> = []) throws(QueryParameterError) {
        var seen: Set<String> = []
        for name in query.map({ String($0.key) }) where !lists.contains(name) && !seen.insert(name).inserted {
            throw QueryParameterError(
                description: "\(name.prefix(64)) is given \(query.getAll(name).count) times: give it once.")
        }
    }
}
