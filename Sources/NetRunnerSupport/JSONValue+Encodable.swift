package import FoundationEssentials

extension JSONValue: Encodable {
    /// Encodes the value as parsed; whole numbers without a fraction (`200`, not `200.0`).
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value):
            if value.rounded() == value, abs(value) < 9.0e15 {
                try container.encode(Int64(value))
            } else {
                try container.encode(value)
            }
        case .string(let value): try container.encode(value)
        case .array(let values): try container.encode(values)
        case .object(let members): try container.encode(members)
        }
    }

    /// The value's JSON text (keys sorted), for a reader of its own.
    package var data: Data {
        // Values parsed from JSON are finite: encoding cannot fail.
        (try? JSONCoding.encoder().encode(self)) ?? Data("null".utf8)
    }
}
