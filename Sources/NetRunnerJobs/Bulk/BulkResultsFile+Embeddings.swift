import FoundationEssentials
import NetRunner

extension BulkResultsFile {
    /// Each embedding of a JSON Lines results file (`bulk` or `embed --json` with an
    /// embedder), in order, read without decoding the whole line: what `similar index` builds
    /// an index from.
    ///
    /// A line's `"float_embedding": [...]` is found by walking its JSON
    /// (``EmbeddingLineScan``: only `inference_results.embedding`'s, each key of that path
    /// once, spaces as Python's `json.dumps` writes them allowed) and its numbers, each of
    /// RFC 8259's grammar, read with the C library's `strtof`, which reads the shortest decimal
    /// Swift writes for a `Float` back to the same `Float`; the rest of the line, without those
    /// numbers, is Foundation's decoder's. Foundation's decoder took 1.4 ms for a whole line of
    /// 1,024 values, about 10 times this. A line the scan does not read (no embedding, a key of
    /// that path repeated or escaped, a number JSON refuses, `0x1p3`, `+1`, `.5`, `007`, or one
    /// that is not a finite `Float`) is decoded whole, as ``records(in:)`` decodes it, so what
    /// it answers is the same.
    ///
    /// - Parameters:
    ///   - path: The results file (a missing file has no lines).
    ///   - skipping: Called with the image of each line without an embedding and why: its
    ///     error (a photo that failed), or that its answer is another task's.
    ///   - body: Called with each embedding's image and values.
    /// - Returns: The lines without an embedding (failed images, other tasks' answers).
    /// - Throws: ``BulkError/unreadableResults(file:reason:)`` for a line that is not a results
    ///   line; what `body` throws.
    @discardableResult
    package static func forEachEmbedding(
        in path: String, skipping: (_ image: String, _ reason: String) -> Void = { _, _ in },
        _ body: (_ image: String, _ embedding: [Float]) throws -> Void
    ) throws -> Int {
        guard let data = try existingContents(path) else { return 0 }
        var skipped = 0
        let decoder = JSONDecoder()
        var failure: (any Error)?
        try forEachWholeLine(data) { (line, number) throws(BulkError) in
            guard failure == nil else { return }
            do {
                if let (image, values) = fastEmbedding(line, decoder: decoder) {
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
                    skipping(record.image, record.error ?? "its answer is no embedding (another task's)")
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

    /// A line's image and embedding, or `nil` when the line is not one this reads
    /// (``EmbeddingLineScan``): the decoder then reads it whole.
    ///
    /// The scan finds the one `inference_results.embedding.float_embedding` by walking the
    /// line's JSON and reads its numbers; the decoder reads everything else, from the line
    /// with those numbers (and `quantized_embedding`'s) cut out: the image, the error, the
    /// task and every other field are the decoder's, so a nested or repeated `"image"` or
    /// vector cannot name or replace what the decoder would read.
    private static func fastEmbedding(_ line: Data, decoder: JSONDecoder) -> (String, [Float])? {
        let scanned = line.withUnsafeBytes { raw in
            EmbeddingLineScan(
                UnsafeBufferPointer(start: raw.baseAddress?.assumingMemoryBound(to: UInt8.self), count: raw.count))
        }
        guard let scanned else { return nil }
        var skeleton = Data()
        skeleton.reserveCapacity(line.count - scanned.cuts.reduce(0) { $0 + $1.count })
        var kept = 0
        for cut in scanned.cuts {
            skeleton.append(line[(line.startIndex + kept)..<(line.startIndex + cut.lowerBound)])
            kept = cut.upperBound
        }
        skeleton.append(line[(line.startIndex + kept)...])
        guard let record = try? decoder.decode(ResultsLine.self, from: skeleton),
            case .other(let answer as EmbeddingResult)? = record.answer, answer.embedding.isEmpty
        else { return nil }
        return (record.image, scanned.values)
    }
}
