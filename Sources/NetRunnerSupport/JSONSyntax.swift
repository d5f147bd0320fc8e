package import FoundationEssentials

/// Where a JSON text first goes wrong, for messages with a line and column
/// (Foundation's decoder says only "The given data was not valid JSON").
///
/// A small recursive scanner of the JSON grammar (trailing commas and `//` and `/* */`
/// comments allowed, as the descriptions' own documented examples use them); it only finds the
/// first error, it builds nothing.
package enum JSONSyntax {
    /// The first syntax error in `data`.
    ///
    /// - Parameter data: The text.
    /// - Returns: The 1-based line and column, and what was expected; `nil` if the scanner
    ///   finds none.
    package static func firstError(in data: Data) -> (line: Int, column: Int, reason: String)? {
        var scanner = Scanner(bytes: [UInt8](data))
        do throws(Failure) {
            scanner.skipSpace()
            try scanner.value(depth: 0)
            scanner.skipSpace()
            if scanner.index < scanner.bytes.count {
                throw Failure(reason: "expected the end of the text after the value")
            }
            return nil
        } catch {
            let (line, column) = scanner.position()
            return (line, column, error.reason + ", found " + scanner.found())
        }
    }

    struct Failure: Error {
        var reason: String
    }

    struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) {
            self.bytes = bytes
        }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipSpace() {
            while let byte = current {
                if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                    index += 1
                } else if byte == UInt8(ascii: "/"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "/") {
                    while let next = current, next != 0x0A { index += 1 }
                } else if byte == UInt8(ascii: "/"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "*") {
                    index += 2
                    while index + 1 < bytes.count,
                        !(bytes[index] == UInt8(ascii: "*") && bytes[index + 1] == UInt8(ascii: "/"))
                    {
                        index += 1
                    }
                    index = min(bytes.count, index + 2)
                } else {
                    return
                }
            }
        }

        mutating func value(depth: Int) throws(Failure) {
            guard depth < 512 else { throw Failure(reason: "nesting deeper than 512 levels") }
            guard let byte = current else { throw Failure(reason: "expected a value") }
            switch byte {
            case UInt8(ascii: "{"): try container(close: UInt8(ascii: "}"), keyed: true, depth: depth)
            case UInt8(ascii: "["): try container(close: UInt8(ascii: "]"), keyed: false, depth: depth)
            case UInt8(ascii: "\""): try string()
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
            default: throw Failure(reason: "expected a value (an object, array, string, number, true, false or null)")
            }
        }

        mutating func container(close: UInt8, keyed: Bool, depth: Int) throws(Failure) {
            index += 1
            let closing = keyed ? "'}'" : "']'"
            skipSpace()
            if current == close {
                index += 1
                return
            }
            while true {
                if keyed {
                    guard current == UInt8(ascii: "\"") else {
                        throw Failure(reason: "expected a member name in quotes")
                    }
                    try string()
                    skipSpace()
                    guard current == UInt8(ascii: ":") else {
                        throw Failure(reason: "expected ':' after the member name")
                    }
                    index += 1
                    skipSpace()
                }
                try value(depth: depth + 1)
                skipSpace()
                if current == close {
                    index += 1
                    return
                }
                guard current == UInt8(ascii: ",") else {
                    throw Failure(reason: "expected ',' or \(closing) after \(keyed ? "a member" : "an element")")
                }
                index += 1
                skipSpace()
                if current == close {  // a trailing comma
                    index += 1
                    return
                }
            }
        }

        mutating func string() throws(Failure) {
            index += 1
            while let byte = current {
                index += 1
                if byte == UInt8(ascii: "\"") { return }
                if byte == UInt8(ascii: "\\") {
                    guard current != nil else { break }
                    index += 1
                } else if byte < 0x20 {
                    index -= 1
                    throw Failure(reason: "a control character (a line break?) inside a string")
                }
            }
            throw Failure(reason: "a string that is never closed with '\"'")
        }

        mutating func literal(_ word: String) throws(Failure) {
            let expected = Array(word.utf8)
            guard index + expected.count <= bytes.count, Array(bytes[index..<(index + expected.count)]) == expected
            else {
                throw Failure(reason: "expected a value (did you mean \(word), or forget quotes around a string?)")
            }
            index += expected.count
        }

        mutating func number() throws(Failure) {
            let start = index
            while let byte = current,
                byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".")
                    || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            {
                index += 1
            }
            guard Double(String(decoding: bytes[start..<index], as: UTF8.self)) != nil else {
                index = start
                throw Failure(reason: "expected a number")
            }
        }

        /// The 1-based line and column of `index`.
        func position() -> (Int, Int) {
            var line = 1
            var column = 1
            for byte in bytes[0..<min(index, bytes.count)] {
                if byte == 0x0A {
                    line += 1
                    column = 1
                } else if byte & 0xC0 != 0x80 {
                    column += 1
                }
            }
            return (line, column)
        }

        /// What stands at `index`, for the message.
        func found() -> String {
            guard let byte = current else { return "the end of the text" }
            let rest = bytes[index..<min(bytes.count, index + 12)]
            let text = String(decoding: rest, as: UTF8.self).prefix { $0 != "\n" && $0 != "\r" }
            return byte == 0x0A || byte == 0x0D ? "a line break" : "\"\(text)\""
        }
    }
}
