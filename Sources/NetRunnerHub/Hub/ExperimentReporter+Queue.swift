import FoundationEssentials
import NetRunnerSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The queue on disk: files `<sequence>-<launch>.jsonl` of at most 500 event lines each, sent
/// oldest first (the sequence orders them across launches).
struct QueueState {
    /// The file being appended to, its path and how many lines it has.
    var descriptor: Int32 = -1
    var current = ""
    var currentCount = 0
    /// Files complete and waiting, oldest first, each with its line count.
    var waiting: [(path: String, count: Int)] = []
    var sequence = 0
    var counts = ExperimentReporter.Counts(
        queued: 0, accepted: 0, duplicates: 0, refused: 0, dropped: 0, discarded: 0)
    var lastFailure: String?

    /// What a killed or stopped process left in `folder`: every file waiting.
    static func recovered(folder: String) -> QueueState {
        var state = QueueState()
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
            .filter { $0.hasSuffix(".jsonl") }.sorted()
        for name in names {
            let path = folder + "/" + name
            let lines = (try? FileIO.contents(of: path, maximumSize: 64 << 20))?.count(where: { $0 == 0x0A }) ?? 0
            state.waiting.append((path, lines))
            state.counts.queued += lines
            state.sequence = max(state.sequence, Int(name.prefix(while: \.isNumber)) ?? 0)
        }
        return state
    }

    /// Appends one event's line; a new file when there is none or the current one is full.
    mutating func append(_ line: Data, folder: String, launch: String, limit: Int) {
        guard counts.queued < limit else {
            counts.dropped += 1
            return
        }
        if descriptor < 0 {
            sequence += 1
            current =
                folder + "/" + String(repeating: "0", count: max(0, 12 - String(sequence).count))
                + "\(sequence)-\(launch).jsonl"
            descriptor = open(current, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                lastFailure = "cannot write \(current): \(String(cString: strerror(errno)))"
                counts.dropped += 1
                return
            }
        }
        let failure = line.withUnsafeBytes { FileIO.writeAll(descriptor, $0) }
        guard failure == nil else {
            lastFailure = "cannot write \(current): \(String(cString: strerror(failure ?? 0)))"
            counts.dropped += 1
            return
        }
        currentCount += 1
        counts.queued += 1
        if currentCount >= ExperimentReporter.batchLimit { closeCurrent() }
    }

    /// Closes the current file and puts it in line to be sent.
    mutating func closeCurrent() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
        if currentCount > 0 { waiting.append((current, currentCount)) } else { unlink(current) }
        currentCount = 0
    }
}

extension ExperimentReporter {
    /// Sends every event recorded before the call, oldest first, one batch a file.
    ///
    /// - Returns: What the reporter has done so far.
    /// - Throws: ``HubClientError`` when the hub could not be reached or asked to wait (401,
    ///   403, 408, 429, 5xx): the unsent files stay, for the next flush.
    @discardableResult
    public func flush() async throws(HubClientError) -> Counts {
        // The files taken here are this call's: a flush beside it takes none of them.
        let files = state.withLock { state in
            state.closeCurrent()
            defer { state.waiting = [] }
            return state.waiting
        }
        for (index, file) in files.enumerated() {
            let events = Self.events(in: file.path)
            do throws(HubClientError) {
                if !events.isEmpty {
                    let receipt = try await hub.reportEvents(events, model: model, alias: alias)
                    state.withLock {
                        $0.counts.accepted += receipt.accepted
                        $0.counts.duplicates += receipt.duplicates
                        $0.counts.refused += receipt.refused.count
                    }
                }
                unlink(file.path)
                state.withLock {
                    $0.counts.queued -= file.count
                    $0.lastFailure = nil
                }
            } catch {
                if Self.isFinal(error) {
                    unlink(file.path)
                    state.withLock {
                        $0.counts.queued -= file.count
                        $0.counts.discarded += file.count
                        $0.lastFailure = "\(error)"
                    }
                    continue
                }
                state.withLock {
                    $0.waiting.insert(contentsOf: files[index...], at: 0)
                    $0.lastFailure = "\(error)"
                }
                throw error
            }
        }
        return counts
    }

    /// Sends in the background, every `interval`.
    ///
    /// After a failure the wait doubles, up to 5 minutes. Starting again replaces the loop;
    /// ``stop()`` ends it.
    ///
    /// - Parameter interval: How often, 0.1 s to one day (default 10 s).
    public func start(every interval: Duration = .seconds(10)) {
        let interval = min(max(interval, .milliseconds(100)), .seconds(86_400))
        let loop = Task { [weak self] in
            var wait = interval
            while !Task.isCancelled {
                try? await Task.sleep(for: wait)
                guard let self, !Task.isCancelled else { return }
                do {
                    try await self.flush()
                    wait = interval
                } catch {
                    wait = min(wait * 2, .seconds(300))
                }
            }
        }
        sending.withLock {
            $0?.cancel()
            $0 = loop
        }
    }

    /// Ends the background sending (what is queued stays on disk for the next reporter).
    public func stop() async {
        let loop = sending.withLock { loop in
            defer { loop = nil }
            return loop
        }
        loop?.cancel()
        await loop?.value
    }

    /// The events of a queue file; a line the process was killed while writing is left out.
    static func events(in path: String) -> [HubExperimentEvent] {
        guard let data = try? FileIO.contents(of: path, maximumSize: 64 << 20) else { return [] }
        let decoder = JSONDecoder()
        return data.split(separator: 0x0A).compactMap { try? decoder.decode(HubExperimentEvent.self, from: $0) }
    }

    /// Whether the hub refused a batch for good: asking again will not change its answer.
    static func isFinal(_ error: HubClientError) -> Bool {
        guard case .refused(_, let status, _) = error else { return false }
        return (400..<500).contains(status) && ![401, 403, 408, 429].contains(status)
    }
}
