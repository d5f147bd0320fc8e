package import FoundationEssentials

/// A parsed JSON value, kept as written so a description (`model.json`, `test.json`) can be
/// validated field by field with the path of every problem.
package enum JSONValue: Equatable, Sendable, Decodable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Decodes any JSON value.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Parses a JSON file into a value, for a reader that validates it field by field.
    ///
    /// JSON5 leniency is on: TensorIO's and Net Runner's own documented examples have trailing
    /// commas.
    ///
    /// - Parameters:
    ///   - data: The file's bytes.
    ///   - source: The file's name, for errors.
    /// - Returns: The value.
    /// - Throws: ``Malformed`` naming the file and the parser's reason.
    package static func parse(_ data: Data, source: String) throws(Malformed) -> JSONValue {
        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true
        do {
            return try decoder.decode(JSONValue.self, from: data)
        } catch {
            // Foundation's message has no position: find the first syntax error ourselves.
            if let found = JSONSyntax.firstError(in: data) {
                throw Malformed(file: source, reason: "line \(found.line), column \(found.column): \(found.reason)")
            }
            if case DecodingError.dataCorrupted(let context) = error {
                throw Malformed(
                    file: source, reason: context.underlyingError.map { "\($0)" } ?? context.debugDescription)
            }
            throw Malformed(file: source, reason: "\(error)")
        }
    }

    /// A number as written in messages and identifiers: whole numbers without a fraction.
    ///
    /// - Parameter value: The number.
    /// - Returns: `"2"` for 2.0, `"2.5"`, `"1e+300"`.
    package static func text(of value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    /// How the value is described in error messages: its JSON text, shortened.
    package var shown: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return String(value)
        case .number(let value): return Self.text(of: value)
        case .string(let value): return "\"" + (value.count > 40 ? String(value.prefix(40)) + "..." : value) + "\""
        case .array(let values): return "an array of \(values.count)"
        case .object: return "an object"
        }
    }

    /// A file that is not JSON: its name and the parser's reason.
    package struct Malformed: Error, Equatable, Sendable {
        /// The file.
        package var file: String
        /// What the parser said.
        package var reason: String
    }
}
