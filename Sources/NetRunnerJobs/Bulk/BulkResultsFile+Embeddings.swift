import FoundationEssentials
package import NetRunner

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension BulkResultsFile {
    /// Each embedding of a JSON Lines results file (`bulk` or `embed --json` with an
    /// embedder), in order, read without decoding the whole line: what `similar index` builds
    /// an index from.
    ///
    /// A line's `"image"` and its `"float_embedding": [...]` are found by their keys (spaces
    /// after a colon or comma allowed, as Python's `json.dumps` writes them) and the numbers read with the C library's `strtof`, which reads the shortest decimal Swift writes
    /// for a `Float` back to the same `Float`; Foundation's decoder took 1.4 ms for a line of
    /// 1,024 values, about 10 times this. A line this does not read (no embedding, an error, a
    /// `null` for a value that is not finite, an image name with escapes it leaves to JSON) is
    /// decoded whole, as ``records(in:)`` decodes it, so what it answers is the same.
    ///
    /// - Parameters:
    ///   - path: The results file (a missing file has no lines).
    ///   - body: Called with each embedding's image and values.
    /// - Returns: The lines without an embedding (failed images, other tasks' answers).
    /// - Throws: ``BulkError/unreadableResults(file:reason:)`` for a line that is not a results
    ///   line; what `body` throws.
    @discardableResult
    package static func forEachEmbedding(
        in path: String, _ body: (_ image: String, _ embedding: [Float]) throws -> Void
    ) throws -> Int {
        guard let data = try existingContents(path) else { return 0 }
        var skipped = 0
        let decoder = JSONDecoder()
        var failure: (any Error)?
        try forEachWholeLine(data) { (line, number) throws(BulkError) in
            guard failure == nil else { return }
            do {
                if let (image, values) = fastEmbedding(line) {
                    try body(image, values)
                    return
                }
                let record: ResultsLine
                do {
                    record = try decoder.decode(ResultsLine.self, from: line)
                } catch {
                    throw BulkError.unreadableResults(file: path, reason: "line \(number) is not a results line")
                }
                guard case .other(let answer as EmbeddingResult)? = record.answer else {
                    skipped += 1
                    return
                }
                try body(record.image, answer.embedding)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return skipped
    }

    /// A line's image and embedding, or `nil` when the line is not one this reads.
    private static func fastEmbedding(_ line: Data) -> (String, [Float])? {
        line.withUnsafeBytes { raw -> (String, [Float])? in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: CChar.self), raw.count > 0 else { return nil }
            let end = base + raw.count
            // Where a key's value starts: both keys come early in a line (its keys are sorted,
            // the embedding's numbers last), so a plain search is enough.
            func find(_ key: StaticString) -> UnsafePointer<CChar>? {
                key.withUTF8Buffer { pattern -> UnsafePointer<CChar>? in
                    guard let first = pattern.first, let bytes = pattern.baseAddress, pattern.count <= raw.count else {
                        return nil
                    }
                    var candidate = base
                    while candidate <= end - pattern.count {
                        guard let hit = memchr(candidate, Int32(first), end - pattern.count - candidate + 1) else {
                            return nil
                        }
                        let at = UnsafePointer(hit.assumingMemoryBound(to: CChar.self))
                        if memcmp(at, bytes, pattern.count) == 0 { return at + pattern.count }
                        candidate = at + 1
                    }
                    return nil
                }
            }
            func skipSpaces(_ pointer: UnsafePointer<CChar>) -> UnsafePointer<CChar> {
                var pointer = pointer
                while pointer < end, pointer.pointee == 0x20 || pointer.pointee == 0x09 { pointer += 1 }
                return pointer
            }
            // The image: a string without escapes (any other is left to the decoder).
            guard let key = find("\"image\":"), case let quote = skipSpaces(key), quote < end, quote.pointee == 0x22
            else { return nil }
            let imageStart = quote + 1
            var cursor = imageStart
            // Up to the closing quote (0x22); a backslash (0x5C) or a control byte is left to the decoder.
            while cursor < end, cursor.pointee != 0x22 {
                if cursor.pointee == 0x5C || UInt8(bitPattern: cursor.pointee) < 0x20 { return nil }
                cursor += 1
            }
            guard cursor < end,
                let image = String(
                    validating: UnsafeBufferPointer(start: imageStart, count: cursor - imageStart).map {
                        UInt8(bitPattern: $0)
                    }, as: UTF8.self)
            else { return nil }
            // The values: numbers separated by commas, up to `]`.
            guard let list = find("\"float_embedding\":"), case let bracket = skipSpaces(list), bracket < end,
                bracket.pointee == 0x5B, let values = numbers(from: bracket + 1, to: end)
            else { return nil }
            return (image, values)
        }
    }

    /// The numbers of a JSON array from just after its `[` up to its `]`, or `nil` for anything
    /// else (a `null`, a value that is not finite, no `]` before `end`).
    private static func numbers(from start: UnsafePointer<CChar>, to end: UnsafePointer<CChar>) -> [Float]? {
        var values: [Float] = []
        values.reserveCapacity(1024)
        var number = start
        while number < end, number.pointee == 0x20 || number.pointee == 0x09 { number += 1 }
        while number < end {
            if number.pointee == 0x5D { return values.isEmpty ? nil : values }  // `]`
            // glibc rounds correctly, subnormals included (it sets ERANGE for those, and for
            // overflow, which `isFinite` refuses): errno is not read, a thread-local costing
            // a third of the time.
            var after: UnsafeMutablePointer<CChar>?
            let value = strtof(number, &after)
            guard let after, UnsafePointer(after) > number, UnsafePointer(after) < end, value.isFinite else {
                return nil
            }
            values.append(value)
            number = UnsafePointer(after)
            while number < end, number.pointee == 0x20 || number.pointee == 0x09 { number += 1 }
            guard number < end else { return nil }
            if number.pointee == 0x2C {  // `,`
                number += 1
                while number < end, number.pointee == 0x20 || number.pointee == 0x09 { number += 1 }
            } else if number.pointee != 0x5D {
                return nil
            }
        }
        return nil
    }
}
