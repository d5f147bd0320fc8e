#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The embedding of a results line, found by walking the line's JSON: what
/// `BulkResultsFile.forEachEmbedding` reads without Foundation's decoder.
///
/// The walk follows strings (escapes included) and nesting, so only the top object's
/// `inference_results`, its `embedding` and that object's `float_embedding` are read: a key of
/// the same name nested elsewhere or inside a string is another value's. It answers `nil`, and
/// the caller decodes the line whole, when a key of that path is repeated or written with an
/// escape (the decoder reads `"float\u005fembedding"` as the same key), when a value of the
/// path is not of its type, when a number of the embedding is not of RFC 8259's grammar
/// (`-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`: `0x1p3`, `+1`, `.5` and `007` are
/// not) or not a finite `Float`, when a byte after the top object is not white space, or when
/// the JSON nests deeper than ``maximumDepth``. Everything else (the image, the error, the
/// other fields, the syntax of what it skips) is left to the decoder, given the line with the
/// ``cuts`` removed.
struct EmbeddingLineScan {
    /// The deepest nesting walked.
    static let maximumDepth = 64

    /// The embedding's values.
    private(set) var values: [Float] = []
    /// The byte ranges inside the brackets of `float_embedding` and `quantized_embedding`, in
    /// order: the line without them is the decoder's.
    private(set) var cuts: [Range<Int>] = []

    private let bytes: UnsafeBufferPointer<UInt8>
    private var at = 0

    /// Walks a line, or answers `nil` for one this does not read.
    ///
    /// - Parameter bytes: The line, without its newline (`strtof` reads only numbers followed
    ///   by another byte of the line).
    init?(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        guard bytes.baseAddress != nil, walkLine() else { return nil }
    }

    private var current: UInt8? { at < bytes.count ? bytes[at] : nil }

    private mutating func skipSpaces() {
        while at < bytes.count, bytes[at] == 0x20 || bytes[at] == 0x09 || bytes[at] == 0x0A || bytes[at] == 0x0D {
            at += 1
        }
    }

    /// Past a string (at its `"`): its contents' range and whether it holds an escape.
    private mutating func string() -> (range: Range<Int>, escaped: Bool)? {
        guard current == 0x22 else { return nil }
        at += 1
        let start = at
        var escaped = false
        while at < bytes.count {
            switch bytes[at] {
            case 0x22:
                at += 1
                return (start..<at - 1, escaped)
            case 0x5C:
                escaped = true
                at += 2
            case 0..<0x20: return nil
            default: at += 1
            }
        }
        return nil
    }

    private func isKey(_ range: Range<Int>, _ name: StaticString) -> Bool {
        name.withUTF8Buffer { name in
            name.count == range.count && zip(name, bytes[range]).allSatisfy { $0 == $1 }
        }
    }

    /// Walks an object (at its `{`), handing each key's range to `member`, which walks the
    /// value; keys with escapes are refused when `plainKeys`.
    private mutating func object(
        depth: Int, plainKeys: Bool, _ member: (inout Self, Range<Int>) -> Bool
    ) -> Bool {
        guard current == 0x7B, depth < Self.maximumDepth else { return false }
        at += 1
        skipSpaces()
        if current == 0x7D {
            at += 1
            return true
        }
        while true {
            guard let key = string(), !(plainKeys && key.escaped) else { return false }
            skipSpaces()
            guard current == 0x3A else { return false }
            at += 1
            skipSpaces()
            guard member(&self, key.range) else { return false }
            skipSpaces()
            switch current {
            case 0x2C:
                at += 1
                skipSpaces()
            case 0x7D:
                at += 1
                return true
            default: return false
            }
        }
    }

    /// Past any value, its syntax left to the decoder but for strings and nesting.
    private mutating func skipValue(depth: Int) -> Bool {
        switch current {
        case 0x7B:
            return object(depth: depth + 1, plainKeys: false) { scan, _ in scan.skipValue(depth: depth + 1) }
        case 0x5B:
            guard depth + 1 < Self.maximumDepth else { return false }
            at += 1
            skipSpaces()
            if current == 0x5D {
                at += 1
                return true
            }
            while true {
                guard skipValue(depth: depth + 1) else { return false }
                skipSpaces()
                switch current {
                case 0x2C:
                    at += 1
                    skipSpaces()
                case 0x5D:
                    at += 1
                    return true
                default: return false
                }
            }
        case 0x22: return string() != nil
        case nil: return false
        default:
            let start = at
            while let byte = current, byte != 0x2C, byte != 0x5D, byte != 0x7D, byte != 0x20, byte != 0x09,
                byte != 0x0A, byte != 0x0D
            {
                at += 1
            }
            return at > start
        }
    }

    /// The whole line: one object, then only white space.
    private mutating func walkLine() -> Bool {
        var results = 0
        skipSpaces()
        let walked = object(depth: 1, plainKeys: true) { scan, key in
            guard scan.isKey(key, "inference_results") else { return scan.skipValue(depth: 1) }
            results += 1
            return scan.inferenceResults()
        }
        skipSpaces()
        return walked && at == bytes.count && results == 1 && cuts.count >= 1
    }

    private mutating func inferenceResults() -> Bool {
        var embeddings = 0
        return object(depth: 2, plainKeys: true) { scan, key in
            guard scan.isKey(key, "embedding") else { return scan.skipValue(depth: 2) }
            embeddings += 1
            return scan.embedding()
        } && embeddings == 1
    }

    private mutating func embedding() -> Bool {
        var (floats, bytes) = (0, 0)
        return object(depth: 3, plainKeys: true) { scan, key in
            if scan.isKey(key, "float_embedding") {
                floats += 1
                return scan.numbers(quantized: false)
            }
            if scan.isKey(key, "quantized_embedding") {
                bytes += 1
                return scan.numbers(quantized: true)
            }
            return scan.skipValue(depth: 3)
        } && floats == 1 && bytes <= 1
    }

    /// The end of a number of RFC 8259's grammar starting here, or `nil`.
    private func jsonNumber() -> Int? {
        var end = at
        func digits() -> Bool {
            let start = end
            while end < bytes.count, (0x30...0x39).contains(bytes[end]) { end += 1 }
            return end > start
        }
        if end < bytes.count, bytes[end] == 0x2D { end += 1 }
        guard end < bytes.count else { return nil }
        if bytes[end] == 0x30 {
            end += 1
        } else if !digits() {
            return nil
        }
        if end < bytes.count, bytes[end] == 0x2E {
            end += 1
            guard digits() else { return nil }
        }
        if end < bytes.count, bytes[end] == 0x65 || bytes[end] == 0x45 {
            end += 1
            if end < bytes.count, bytes[end] == 0x2B || bytes[end] == 0x2D { end += 1 }
            guard digits() else { return nil }
        }
        return end
    }

    /// An array of numbers (at its `[`): the embedding's finite `Float`s, or a quantized
    /// embedding's integers in -128...127; its contents' range is cut.
    private mutating func numbers(quantized: Bool) -> Bool {
        guard current == 0x5B, let base = bytes.baseAddress else { return false }
        at += 1
        let start = at
        skipSpaces()
        if !quantized { values.reserveCapacity(1024) }
        if current != 0x5D {
            while true {
                // A number is followed by a byte of the line (a digit there would be read on by strtof).
                guard let end = jsonNumber(), end < bytes.count else { return false }
                if quantized {
                    guard end - at <= 4, let value = Int(String(decoding: bytes[at..<end], as: UTF8.self)),
                        (-128...127).contains(value)
                    else { return false }
                } else {
                    // glibc rounds correctly, subnormals included; errno is not read (a
                    // thread-local costing a third of the time): overflow is refused by
                    // `isFinite`, underflow to zero of a number that is not zero below.
                    var after: UnsafeMutablePointer<CChar>?
                    let number = UnsafeRawPointer(base + at).assumingMemoryBound(to: CChar.self)
                    let value = strtof(number, &after)
                    guard let after, UnsafePointer(after) == number + (end - at), value.isFinite else {
                        return false
                    }
                    if value == 0,
                        bytes[at..<end].prefix(while: { $0 != 0x65 && $0 != 0x45 }).contains(where: {
                            (0x31...0x39).contains($0)
                        })
                    {
                        return false
                    }
                    values.append(value)
                }
                at = end
                skipSpaces()
                guard current == 0x2C else { break }
                at += 1
                skipSpaces()
            }
        }
        guard current == 0x5D else { return false }
        cuts.append(start..<at)
        at += 1
        return true
    }
}
