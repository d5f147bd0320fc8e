// An append-only results file that survives interruption.
//
// Invariants: every record is one line written by one write(2) on a descriptor opened with
// O_APPEND, so a reader never sees two records interleaved; a run killed mid-write can leave
// at most one line without its newline at the end, and reopening the file cuts that partial
// line off before anything is appended, so the file only ever holds whole records.

import FoundationEssentials
package import NetRunner
import NetRunnerImage
import NetRunnerSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file of ``ResultsLine`` lines (JSON Lines or CSV) that a run appends to and an
/// interrupted run resumes from: ``completedKeys`` says which images are already done.
///
///     let results = try BulkResultsFile(path: "out.jsonl", format: .jsonLines, resume: true)
///     for file in files where !results.completedKeys.contains(ExactString(file)) {
///         try results.append(ResultsLine(image: file, answer: try task.run(fileAt: file)))
///     }
package final class BulkResultsFile: Sendable {
    /// How records are written.
    package enum Format: String, Equatable, Sendable, CaseIterable {
        /// One JSON object per line.
        case jsonLines = "jsonl"
        /// Comma-separated values with a header line (RFC 4180 quoting).
        case csv

        /// The format a file name implies: `.csv` is CSV, anything else JSON Lines.
        ///
        /// - Parameter path: The file's path.
        /// - Returns: The format.
        package static func implied(by path: String) -> Format {
            path.lowercased().hasSuffix(".csv") ? .csv : .jsonLines
        }
    }

    /// The file's path.
    package let path: String
    /// The format.
    package let format: Format
    /// The keys (``ResultsLine/key``) of the records the file held when it was opened (less
    /// those ``dropFailedRecords()`` took out).
    package var completedKeys: Set<ExactString> { state.withLock { $0.completedKeys } }
    /// How many records the file held when it was opened.
    package var resumedCount: Int { state.withLock { $0.resumedCount } }
    /// How many of those records are failures.
    package var resumedFailures: Int { state.withLock { $0.resumedFailures } }
    /// Whether an unfinished last line was cut off when the file was opened.
    package let repairedPartialLine: Bool

    private struct State {
        var descriptor: Int32
        var completedKeys: Set<ExactString>
        var resumedCount: Int
        var resumedFailures: Int
    }

    private let state: Mutex<State>
    private var descriptor: Int32 { state.withLock { $0.descriptor } }

    /// The CSV header line (the column names).
    package static let csvColumns = [
        "image", "answer", "score", "results", "decode_latency", "preprocessor_latency", "inference_latency",
        "total_latency", "error",
    ]

    /// Opens (or creates) a results file.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - format: Its format.
    ///   - resume: `true` to keep the records already in the file (and cut off an unfinished
    ///     last line); `false` to start the file afresh.
    /// - Throws: ``BulkError/unreadableResults(file:reason:)`` when the file cannot be
    ///   opened, ``BulkError/foreignResults(file:line:)`` when it holds something else than
    ///   results in this format.
    package init(path: String, format: Format, resume: Bool) throws(BulkError) {
        self.path = path
        self.format = format
        var keys: Set<ExactString> = []
        var count = 0
        var failures = 0
        var repaired = false
        var keep = 0
        // Opened (never truncated) and locked before anything is read or cut.
        let descriptor = try Self.openLocked(path)
        do {
            if resume, let existing = try Self.existingContents(path) {
                let parsed = try Self.scan(existing, format: format, path: path) { record, failed in
                    keys.insert(record)
                    count += 1
                    if failed { failures += 1 }
                }
                keep = parsed.wholeLength
                repaired = parsed.wholeLength < existing.count
            }
        } catch {
            Self.unlockAndClose(descriptor)
            throw error
        }
        if !resume, ftruncate(descriptor, 0) != 0 {
            let reason = String(cString: strerror(errno))
            Self.unlockAndClose(descriptor)
            throw .unreadableResults(file: path, reason: "cannot start it afresh: \(reason)")
        }
        if repaired, ftruncate(descriptor, off_t(keep)) != 0 {
            let reason = String(cString: strerror(errno))
            Self.unlockAndClose(descriptor)
            throw .unreadableResults(file: path, reason: "cannot cut off its unfinished last line: \(reason)")
        }
        self.state = Mutex(
            State(descriptor: descriptor, completedKeys: keys, resumedCount: count, resumedFailures: failures))
        self.repairedPartialLine = repaired
        if format == .csv && keep == 0 {
            try write(Self.csvColumns.joined(separator: ",") + "\n")
        }
    }

    deinit {
        Self.unlockAndClose(descriptor)
    }

    /// Closes a descriptor this file locked, unlocking it first: a child forked by another
    /// thread (a decoder child, a gate run) holds a copy of the descriptor until its exec, and
    /// with it the lock, so a run that starts right after this one ended would be refused for
    /// nothing.
    private static func unlockAndClose(_ descriptor: Int32) {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    /// Appends one record as one whole line.
    ///
    /// - Parameter record: The record.
    /// - Throws: ``BulkError/unreadableResults(file:reason:)`` when the write fails
    ///   (a full disk, say).
    package func append(_ record: ResultsLine) throws(BulkError) {
        try write(format.line(for: record))
    }

    /// Takes the failed images' lines out of the file, so a rerun retries them (`bulk
    /// --retry-failed`); see ``dropRecords(where:)``.
    ///
    /// - Returns: How many lines were taken out.
    /// - Throws: ``BulkError/unreadableResults(file:reason:)`` when the file cannot be
    ///   read or rewritten (it is then unchanged).
    @discardableResult
    package func dropFailedRecords() throws(BulkError) -> Int {
        try dropRecords { _, failed in failed }
    }

    /// Takes the lines `isDropped` picks out of the file, so a rerun runs their images again
    /// (or not at all, when they are no longer listed): the kept lines are written to a
    /// temporary file in the same folder, locked, synced and renamed over the file, so every
    /// image still has exactly one line, or none, whenever the run stops.
    ///
    /// - Parameter isDropped: Whether a line goes, by its image as the file spells it
    ///   (compared byte for byte) and whether it failed.
    /// - Returns: How many lines were taken out.
    /// - Throws: ``BulkError/unreadableResults(file:reason:)`` when the file cannot be
    ///   read or rewritten (it is then unchanged).
    @discardableResult
    package func dropRecords(
        where isDropped: (_ image: ExactString, _ failed: Bool) -> Bool
    ) throws(BulkError) -> Int {
        guard let data = try Self.existingContents(path) else { return 0 }
        var kept = Data()
        var droppedKeys: [ExactString] = []
        var droppedFailures = 0
        let decoder = JSONDecoder()
        let csv = format == .csv
        try Self.forEachWholeLine(data, quoted: csv) { (line, number) throws(BulkError) in
            if csv {
                let text = String(decoding: line, as: UTF8.self)
                if number > 1, let image = Self.firstCSVField(text) {
                    let failed = !text.hasSuffix(",")
                    if isDropped(ExactString(image), failed) {
                        droppedKeys.append(ExactString(image))
                        droppedFailures += failed ? 1 : 0
                        return
                    }
                }
            } else if let record = try? decoder.decode(RecordKey.self, from: line),
                isDropped(ExactString(record.image), record.error)
            {
                droppedKeys.append(
                    ResultsLine.key(image: record.image, model: record.model, iteration: record.iteration))
                droppedFailures += record.error ? 1 : 0
                return
            }
            kept.append(line)
            kept.append(UInt8(ascii: "\n"))
        }
        guard !droppedKeys.isEmpty else { return 0 }
        let replacement = try Self.replace(path, with: kept)
        state.withLock { state in
            Self.unlockAndClose(state.descriptor)
            state.descriptor = replacement
            state.completedKeys.subtract(droppedKeys)
            state.resumedCount -= droppedKeys.count
            state.resumedFailures = max(0, state.resumedFailures - droppedFailures)
        }
        return droppedKeys.count
    }

    /// Writes `data` to a new locked file beside `path` and renames it over `path`.
    ///
    /// - Returns: The new file's descriptor, open for appending, its lock held.
    private static func replace(_ path: String, with data: Data) throws(BulkError) -> Int32 {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let temporary = "\(folder)/.\(name).\(getpid()).retry.tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw .unreadableResults(file: path, reason: "cannot rewrite it: \(String(cString: strerror(errno)))")
        }
        var failure: Int32?
        if flock(descriptor, LOCK_EX | LOCK_NB) != 0 { failure = errno }
        if failure == nil { failure = data.withUnsafeBytes { FileIO.writeAll(descriptor, $0) } }
        if failure == nil, fsync(descriptor) != 0 { failure = errno }
        if failure == nil, rename(temporary, path) != 0 { failure = errno }
        if let failure {
            close(descriptor)
            unlink(temporary)
            throw .unreadableResults(file: path, reason: "cannot rewrite it: \(String(cString: strerror(failure)))")
        }
        return descriptor
    }

    /// The whole lines of a JSON Lines results file, as written (an unfinished last line is
    /// left out).
    ///
    /// - Parameter path: The file.
    /// - Returns: Each line without its newline.
    /// - Throws: ``BulkError/unreadableResults(file:reason:)`` when it cannot be read.
    static func wholeLines(in path: String) throws(BulkError) -> [Data] {
        guard let data = try existingContents(path) else {
            throw .unreadableResults(file: path, reason: "no such file")
        }
        var lines: [Data] = []
        try forEachWholeLine(data) { (line, _) throws(BulkError) in lines.append(Data(line)) }
        return lines
    }

    /// Every record in a JSON Lines results file.
    ///
    /// - Parameter path: The file.
    /// - Returns: The records, in file order (an unfinished last line is left out).
    /// - Throws: ``BulkError/unreadableResults(file:reason:)`` for a line that is not a
    ///   record.
    package static func records(in path: String) throws(BulkError) -> [ResultsLine] {
        guard let data = try existingContents(path) else { return [] }
        var records: [ResultsLine] = []
        let decoder = JSONDecoder()
        try forEachWholeLine(data) { (line, number) throws(BulkError) in
            do {
                records.append(try decoder.decode(ResultsLine.self, from: line))
            } catch {
                throw .unreadableResults(file: path, reason: "line \(number) is not a results line")
            }
        }
        return records
    }

    private func write(_ line: String) throws(BulkError) {
        var line = line
        let failure = line.withUTF8 { FileIO.writeAll(descriptor, UnsafeRawBufferPointer($0)) }
        if let failure { throw .unreadableResults(file: path, reason: String(cString: strerror(failure))) }
    }

    /// Opens the file for appending (created if missing), refusing anything but a regular
    /// file without blocking on it (a named pipe), and takes an exclusive lock on it that
    /// lasts as long as the descriptor, so two runs never write one file.
    private static func openLocked(_ path: String) throws(BulkError) -> Int32 {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NONBLOCK | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let reason = errno == ENXIO ? "not a regular file" : String(cString: strerror(errno))
            throw .unreadableResults(file: path, reason: reason)
        }
        var status = stat()
        var reason: String?
        if fstat(descriptor, &status) != 0 {
            reason = String(cString: strerror(errno))
        } else if status.st_mode & S_IFMT != S_IFREG {
            reason = "not a regular file (\(FileIO.fileKind(Int(status.st_mode))))"
        } else if flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            reason =
                errno == EWOULDBLOCK
                ? "another run is writing it (wait for that run to end, or choose another file)"
                : "cannot lock it: \(String(cString: strerror(errno)))"
        } else {
            let flags = fcntl(descriptor, F_GETFL)
            if flags < 0 || fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) != 0 {
                reason = String(cString: strerror(errno))
            }
        }
        if let reason {
            close(descriptor)
            throw .unreadableResults(file: path, reason: reason)
        }
        return descriptor
    }

    static func existingContents(_ path: String) throws(BulkError) -> Data? {
        guard access(path, F_OK) == 0 else { return nil }
        do {
            return try FileIO.contents(of: path)
        } catch {
            throw .unreadableResults(file: path, reason: "\(error)")
        }
    }

    /// Calls `body` with each newline-terminated line (without its newline) and its number.
    ///
    /// - Returns: The length of the whole lines (where an unfinished last line starts).
    ///
    /// - Parameters:
    ///   - data: The file's bytes.
    ///   - quoted: `true` for CSV: a line break inside a quoted field (RFC 4180) belongs to the
    ///     record, so a file name with `\n` or `\r` stays one record.
    ///   - body: Called with each record and its number.
    /// - Throws: What `body` throws.
    @discardableResult
    static func forEachWholeLine(
        _ data: Data, quoted: Bool = false, _ body: (Data, Int) throws(BulkError) -> Void
    ) throws(BulkError) -> Int {
        // The line breaks are found on the raw bytes, a batch of lines at a time: Data's own
        // subscript checks exclusive access on every byte, which took most of the time of
        // reading a results file of embeddings (10 kB a line).
        var offset = 0
        var number = 0
        while true {
            let (lines, next) = data.withUnsafeBytes { raw in
                Self.lineRanges(raw, from: offset, quoted: quoted, limit: 65_536)
            }
            for line in lines {
                number += 1
                if !line.isEmpty {
                    try body(data[(data.startIndex + line.lowerBound)..<(data.startIndex + line.upperBound)], number)
                }
            }
            guard next > offset, !lines.isEmpty else { return offset }
            offset = next
        }
    }

    /// The ranges of up to `limit` newline-terminated lines from `offset`, a line's start
    /// (without their newlines), and where the next line starts.
    ///
    /// - Parameters:
    ///   - raw: The file's bytes.
    ///   - offset: Where to start: the start of a line, outside quotes.
    ///   - quoted: Whether a newline inside double quotes belongs to its line (CSV).
    ///   - limit: The most lines.
    /// - Returns: The lines, and the offset after the last one's newline.
    private static func lineRanges(
        _ raw: UnsafeRawBufferPointer, from offset: Int, quoted: Bool, limit: Int
    ) -> ([Range<Int>], Int) {
        guard let base = raw.baseAddress else { return ([], offset) }
        var lines: [Range<Int>] = []
        var start = offset
        guard quoted else {
            while lines.count < limit, start < raw.count,
                let found = memchr(base + start, 0x0A, raw.count - start)
            {
                let newline = base.distance(to: UnsafeRawPointer(found))
                lines.append(start..<newline)
                start = newline + 1
            }
            return (lines, start)
        }
        let bytes = base.assumingMemoryBound(to: UInt8.self)
        var index = start
        var inQuotes = false
        while lines.count < limit, index < raw.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                inQuotes.toggle()
            } else if byte == UInt8(ascii: "\n"), !inQuotes {
                lines.append(start..<index)
                start = index + 1
            }
            index += 1
        }
        return (lines, start)
    }

    /// Reads the keys of every whole line.
    private static func scan(
        _ data: Data, format: Format, path: String, key: (ExactString, Bool) -> Void
    ) throws(BulkError) -> (wholeLength: Int, Void) {
        let decoder = JSONDecoder()
        var sawHeader = false
        let length = try forEachWholeLine(data, quoted: format == .csv) { (line, number) throws(BulkError) in
            switch format {
            case .jsonLines:
                guard let record = try? decoder.decode(RecordKey.self, from: line) else {
                    throw .foreignResults(file: path, line: number)
                }
                key(
                    ResultsLine.key(image: record.image, model: record.model, iteration: record.iteration), record.error
                )
            case .csv:
                let text = String(decoding: line, as: UTF8.self)
                if !sawHeader {
                    guard text == csvColumns.joined(separator: ",") else {
                        throw .foreignResults(file: path, line: nil)
                    }
                    sawHeader = true
                    return
                }
                guard let image = firstCSVField(text) else {
                    throw .unreadableResults(file: path, reason: "line \(number) is not a results line")
                }
                // The error is the last column: a line that does not end with a comma has one.
                key(ExactString(image), !text.hasSuffix(","))
            }
        }
        return (length, ())
    }

    /// The part of a JSON results line that identifies it.
    private struct RecordKey: Decodable {
        var image: String
        var error: Bool
        var model: String?
        var iteration: Int?
    }
}
