import FoundationEssentials
import Logging
import NetRunnerHub

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs the gates' evaluations: fair bounded queues per model (``GateQueue``; what finds no
/// room waits in the store, pending), at most `concurrency` at once, at a lower priority than
/// the hub's requests (the children niced, the store's requests served first), each one
/// `netrunner evaluate` in a child process (a model that crashes it costs that evaluation, never
/// the hub), on the gate's test bundles with the baseline and the candidate side by side, as a
/// user's `evaluate --compare BASELINE --compare CANDIDATE` runs them: the same threads, the
/// same warm-up, so latencies compare. The reports stay in the data folder
/// (`evaluations/NAME/VERSION/ALIAS/reports/BUNDLE/report.html`).
actor GateRunner {
    /// Where the evaluations run and with what.
    struct Settings: Sendable {
        /// The `netrunner` executable that evaluates, or `nil` (then every evaluation fails,
        /// saying so).
        var evaluator: String?
        /// The folder of the test bundles gates name (`--test-bundles`), or `nil`.
        var testBundles: String?
        /// The hub's data folder.
        var dataFolder: String
        /// The most evaluations at once.
        var concurrency = 1
        /// The most evaluations waiting in memory, all models together; past it, or past
        /// ``modelQueueLimit`` for one model, an evaluation waits in the store (pending) until
        /// there is room.
        var queueLimit = 256
        /// The most evaluations of one model waiting in memory.
        var modelQueueLimit = 16
        /// The nice value the evaluations run at (`setpriority(2)`): below the hub's requests.
        var niceness: Int32 = 10
        /// The longest one evaluation may take before its process group is killed.
        var timeout: Duration = .seconds(900)
        /// How often the hub looks for versions no gate has evaluated (published by a node of
        /// an older release) while no evaluation ends to make it look; `.zero`: only at start
        /// and after each evaluation pass.
        var sweepInterval: Duration = .seconds(60)
    }

    let store: HubStore
    let blobs: any BlobStore
    let settings: Settings
    let logger: Logger
    private var queue: GateQueue
    /// The process groups of the evaluations running now.
    private var children: Set<pid_t> = []
    /// Set by ``stopRunning()``: nothing more starts.
    private var stopped = false
    /// The periodic look for unevaluated versions (``startSweeping()``).
    private var sweeper: Task<Void, Never>?
    /// Whether a look is under way (one at a time).
    private var sweeping = false
    /// The runner's tasks under way that use the store (evaluations, refills, looks), which
    /// ``stopRunning()`` waits for: the database is closed after it.
    private var busy = 0
    private var idleWaiters: [CheckedContinuation<Void, Never>] = []
    /// Evaluations finished, by status (`/metrics`).
    private(set) var finished: [HubGateStatus: Int] = [:]
    /// Alias moves refused by a gate, and moves forced past one (`/metrics`).
    private(set) var refusals = 0
    private(set) var forced = 0

    func countRefusal() { refusals += 1 }
    func countForced() { forced += 1 }

    /// The counts in Prometheus's text format (version 0.0.4).
    func metricsText() -> String {
        var lines = [
            "# HELP netrunner_hub_gate_evaluations_total Gate evaluations finished, by result.",
            "# TYPE netrunner_hub_gate_evaluations_total counter",
        ]
        for status in [HubGateStatus.passed, .failed] {
            lines.append(
                "netrunner_hub_gate_evaluations_total{status=\"\(status.rawValue)\"} \(finished[status, default: 0])")
        }
        lines += [
            "# HELP netrunner_hub_gate_evaluations_waiting Gate evaluations queued or running.",
            "# TYPE netrunner_hub_gate_evaluations_waiting gauge",
            "netrunner_hub_gate_evaluations_waiting \(backlog)",
            "# HELP netrunner_hub_gate_refusals_total Alias moves refused because a version had not passed the gate.",
            "# TYPE netrunner_hub_gate_refusals_total counter",
            "netrunner_hub_gate_refusals_total \(refusals)",
            "# HELP netrunner_hub_gate_forced_total Alias moves an admin forced past a gate.",
            "# TYPE netrunner_hub_gate_forced_total counter",
            "netrunner_hub_gate_forced_total \(forced)",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    init(store: HubStore, blobs: any BlobStore, settings: Settings, logger: Logger) {
        self.store = store
        self.blobs = blobs
        self.settings = settings
        self.logger = logger
        queue = GateQueue(perModel: settings.modelQueueLimit, total: settings.queueLimit)
    }

    /// The evaluations waiting in memory and running (not those waiting in the store).
    var backlog: Int { queue.count + queue.runningCount }

    /// Queues evaluations (the store has them as pending); those that find no room in their
    /// model's queue wait in the store, and are read back when there is room (never failed).
    func submit(_ evaluations: [HubEvaluation]) async {
        var left = 0
        for evaluation in evaluations where !queue.add(evaluation) { left += 1 }
        if left > 0 {
            logger.notice("\(left) evaluations wait in the store: their models' queues are full")
        }
        pump()
    }

    /// Stops the evaluations running (their process groups killed; they stay pending in the
    /// store and run again at the next start), starts no more, and returns once the tasks
    /// under way that use the store have ended.
    func stopRunning() async {
        stopped = true
        sweeper?.cancel()
        sweeper = nil
        queue.removeAll()
        for child in children { kill(-child, SIGKILL) }
        while busy > 0 { await withCheckedContinuation { idleWaiters.append($0) } }
    }

    /// Counts a task that uses the store (``stopRunning()`` waits for it).
    private func begin() { busy += 1 }

    /// Counts it ended.
    private func end() {
        busy -= 1
        guard busy == 0 else { return }
        for waiter in idleWaiters { waiter.resume() }
        idleWaiters = []
    }

    /// Queues every version no gate has evaluated (``HubStore/queueUnevaluated()``).
    ///
    /// Run at start, after each evaluation pass, and every ``Settings/sweepInterval``.
    /// Returns how many.
    @discardableResult
    func sweep() async -> Int {
        guard !stopped, !sweeping else { return 0 }
        sweeping = true
        begin()
        defer {
            sweeping = false
            end()
        }
        // Refills that found the store unanswering are tried again.
        queue.clearStalls()
        refill()
        do {
            let found = try await store.queueUnevaluated()
            if !found.isEmpty {
                logger.notice(
                    "\(found.count) versions had no evaluation against their gates (published by an older node?): queued"
                )
            }
            await submit(found)
            return found.count
        } catch {
            logger.error("cannot look for versions no gate has evaluated: \(error)")
            return 0
        }
    }

    /// Starts looking for unevaluated versions every ``Settings/sweepInterval`` until
    /// ``stopRunning()`` (or the runner is gone).
    func startSweeping() {
        guard sweeper == nil, !stopped, settings.sweepInterval > .zero else { return }
        let interval = settings.sweepInterval
        sweeper = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard !Task.isCancelled, let runner = self else { return }
                await runner.sweep()
            }
        }
    }

    private func started(_ child: pid_t) { children.insert(child) }
    private func ended(_ child: pid_t) { children.remove(child) }

    private func pump() {
        while !stopped, queue.runningCount < settings.concurrency, let next = queue.next() {
            begin()
            Task {
                await HubStore.$yieldsToRequests.withValue(true) { await self.run(next) }
                self.end()
            }
        }
        refill()
    }

    /// Reads back, oldest first, the evaluations that wait in the store of each model whose queue
    /// has room.
    private func refill() {
        guard !stopped else { return }
        for name in queue.refillable() {
            guard let ask = queue.beginRefill(name) else { continue }
            begin()
            Task {
                await HubStore.$yieldsToRequests.withValue(true) {
                    let found = try? await self.store.pendingEvaluations(of: name, limit: ask.limit)
                    self.refilled(name, found: found, ask: ask)
                }
                self.end()
            }
        }
    }

    private func refilled(_ name: String, found: [HubEvaluation]?, ask: GateQueue.Ask) {
        if found == nil { logger.error("cannot read the evaluations of \(name) waiting in the store") }
        guard !stopped else { return }
        queue.endRefill(name, found: found, ask: ask)
        pump()
    }

    private func run(_ evaluation: HubEvaluation) async {
        let result = await evaluate(evaluation)
        if let result {
            do {
                if let (recorded, promoted) = try await store.finish(result) {
                    finished[recorded.status, default: 0] += 1
                    let moved = promoted.map { " and is now \($0.alias)" } ?? ""
                    logger.notice(
                        "\(recorded.name)@\(recorded.version) \(recorded.status.rawValue) the gate of \(recorded.alias)\(moved)"
                    )
                }
            } catch {
                logger.error("cannot record the evaluation of \(evaluation.name)@\(evaluation.version): \(error)")
            }
        }
        queue.finished(evaluation)
        pump()
        // A pass is over: versions an older node published meanwhile are evaluated next.
        if queue.isIdle && !stopped {
            Task { await HubStore.$yieldsToRequests.withValue(false) { await self.sweep() } }
        }
    }

    // MARK: One evaluation

    /// Runs one evaluation; `nil` when it is stale (the gate changed since it was queued).
    private func evaluate(_ evaluation: HubEvaluation) async -> HubEvaluation? {
        var result = evaluation
        result.finishedAt = nil
        let folders = Self.knownFolders(settings, evaluation)
        func failed(_ message: String) -> HubEvaluation {
            result.status = .failed
            // Anonymous readers see it: no path of the hub's (GateMessages).
            result.message = GateMessages.scrubbed(message, folders: folders)
            result.finishedAt = HubStore.now()
            return result
        }
        let gate: HubGate
        let candidate: HubVersion
        var baseline: HubVersion?
        do {
            guard let found = try await store.gate(evaluation.alias, of: evaluation.name),
                found.revision == evaluation.gateRevision
            else { return nil }
            gate = found
            guard let version = try await store.version(evaluation.version, of: evaluation.name) else {
                return failed("version \(evaluation.version) is no longer published")
            }
            candidate = version
            // The baseline is what the alias serves as it runs (a version promoted meanwhile).
            let current = try await store.baseline(of: evaluation.alias, of: evaluation.name)
            result.baseline = current == evaluation.version ? nil : current
            if let number = result.baseline { baseline = try await store.version(number, of: evaluation.name) }
        } catch {
            return failed("the store did not answer: \(error)")
        }
        guard let evaluator = settings.evaluator else {
            return failed("this hub has no evaluator: `netrunner` beside `netrunner-net`, or --evaluator PATH")
        }
        guard let bundlesFolder = settings.testBundles else {
            return failed("this hub has no --test-bundles folder")
        }
        let folder = Self.folder(
            dataFolder: settings.dataFolder, name: evaluation.name, version: evaluation.version, alias: evaluation.alias
        )
        try? FileManager.default.removeItem(atPath: folder)
        do {
            try FileManager.default.createDirectory(atPath: folder + "/models", withIntermediateDirectories: true)
        } catch {
            return failed("cannot make \(folder): \(error)")
        }
        // The models under names that say which is which (the store's files are named by digest).
        var compared: [String] = []
        for (role, version) in [("baseline", baseline), ("candidate", candidate)] {
            guard let version else { continue }
            let link = "\(folder)/models/\(role)-v\(version.version).\(version.format)"
            do {
                try await blobs.materialise(version.sha256, at: link)
            } catch {
                return failed("cannot link the \(role)'s file: \(error)")
            }
            compared += ["--compare", link]
        }
        let bundles = gate.bundles.map { Self.absolute("\(bundlesFolder)/\($0).testbundle") }
        let output = folder + "/out"
        let arguments =
            [evaluator, "evaluate"] + bundles + compared + ["--output", output, "--no-progress", "--restart"]
        let status = await Self.runProcess(
            arguments, log: folder + "/evaluate.log", timeout: settings.timeout, niceness: settings.niceness,
            started: { child in await self.started(child) }, ended: { child in await self.ended(child) })
        guard !stopped else { return nil }
        guard status == 0 else {
            let log = (try? String(contentsOfFile: folder + "/evaluate.log", encoding: .utf8)) ?? ""
            let tail = log.split(separator: "\n").suffix(3).joined(separator: " ")
            return failed(
                (status == -1 ? "the evaluation took longer than \(settings.timeout)" : "the evaluation failed")
                    + (tail.isEmpty ? "" : ": \(tail.prefix(600))"))
        }
        // Each test's report, moved to reports/BUNDLE.
        var candidateMetrics: [String: [String: Double]] = [:]
        var baselineMetrics: [String: [String: Double]] = [:]
        let made = (try? FileManager.default.contentsOfDirectory(atPath: output)) ?? []
        for test in made {
            guard let data = FileManager.default.contents(atPath: "\(output)/\(test)/report.json"),
                let report = try? JSONDecoder().decode(ReportFile.self, from: data),
                let bundle = gate.bundles.first(where: { report.test.path.hasSuffix("/\($0).testbundle") }),
                let last = report.models.last
            else { continue }
            try? FileManager.default.createDirectory(atPath: folder + "/reports", withIntermediateDirectories: true)
            _ = rename("\(output)/\(test)", "\(folder)/reports/\(bundle)")
            candidateMetrics[bundle] = last.metrics(size: candidate.size, withAgreement: baseline != nil)
            if let baseline, report.models.count > 1 {
                baselineMetrics[bundle] = report.models[0].metrics(size: baseline.size, withAgreement: false)
            }
        }
        result.metrics = candidateMetrics
        result.baselineMetrics = baselineMetrics
        result.failures = Self.failures(
            gate: gate, candidate: candidateMetrics, baseline: baseline == nil ? nil : baselineMetrics)
        result.status = result.failures.isEmpty ? .passed : .failed
        result.finishedAt = HubStore.now()
        return result
    }

    /// The hub's own folders as an evaluation's messages would name them, the longest first,
    /// with what a reader is shown instead (``GateMessages``).
    static func knownFolders(_ settings: Settings, _ evaluation: HubEvaluation) -> [(path: String, shown: String)] {
        let given = Self.folder(
            dataFolder: settings.dataFolder, name: evaluation.name, version: evaluation.version,
            alias: evaluation.alias)
        var known: [(path: String, shown: String)] = []
        // As the child was given them (the data folder may be relative), then from the root.
        for folder in Set([absolute(given), given]).sorted(by: { $0.count > $1.count }) {
            known += [
                (folder + "/models/", ""), (folder + "/out/", ""), (folder + "/", ""),
                (folder, "the evaluation's folder"),
            ]
        }
        if let bundles = settings.testBundles { known.append((absolute(bundles) + "/", "")) }
        for data in Set([absolute(settings.dataFolder), settings.dataFolder]).sorted(by: { $0.count > $1.count }) {
            known.append((data + "/", ""))
        }
        if let evaluator = settings.evaluator { known.append((evaluator, "netrunner")) }
        return known
    }

    /// Every rule on every bundle: what failed.
    ///
    /// `baseline` is `nil` when the alias served no other version (then only thresholds apply, and agreement is not measured).
    static func failures(
        gate: HubGate, candidate: [String: [String: Double]], baseline: [String: [String: Double]]?
    ) -> [HubGateFailure] {
        var failures: [HubGateFailure] = []
        for bundle in gate.bundles {
            for rule in gate.rules {
                if rule.metric == "agreement" && baseline == nil { continue }
                let value = candidate[bundle]?[rule.metric]
                let base = rule.metric == "agreement" ? nil : baseline?[bundle]?[rule.metric]
                for reason in rule.failures(value: value, baseline: base) {
                    failures.append(
                        HubGateFailure(
                            bundle: bundle, rule: rule.description, metric: rule.metric, value: value, baseline: base,
                            reason: reason))
                }
            }
        }
        return failures
    }

    /// `path` from the root: as given when it starts with `/`, else under the working folder.
    static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/"), let folder = getcwd(nil, 0) else { return path }
        defer { free(folder) }
        return String(cString: folder) + "/" + path
    }

    /// Where an evaluation's files are.
    static func folder(dataFolder: String, name: String, version: Int, alias: String) -> String {
        "\(dataFolder)/evaluations/\(name)/\(version)/\(alias)"
    }

    // MARK: The report

    /// What the hub reads of `evaluate`'s `report.json`: the test's path and each model's flat
    /// metrics (`ModelReport.flatMetrics`), names and numbers, whatever the task.
    struct ReportFile: Decodable {
        struct Test: Decodable {
            var path: String
        }

        struct Model: Decodable {
            /// A figure that is not a number (NaN, written as `null`) is as one not given.
            var flatMetrics: [String: Double?]

            /// The evaluation's metrics as the gate rules name them, with the hub's own
            /// `size_bytes` (``HubGateRule/hubMetrics``); `agreement` only when a baseline was
            /// compared.
            func metrics(size: Int, withAgreement: Bool) -> [String: Double] {
                var values = flatMetrics.compactMapValues { $0 }
                if !withAgreement { values["agreement"] = nil }
                values["size_bytes"] = Double(size)
                return values
            }
        }

        var test: Test
        var models: [Model]
    }
}
