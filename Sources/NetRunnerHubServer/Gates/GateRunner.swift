import FoundationEssentials
import Logging
import NetRunnerHub

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs the gates' evaluations: a bounded queue, at most `concurrency` at once, each one
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
        /// The most evaluations waiting; past it, an evaluation fails at once ("set the gate
        /// again").
        var queueLimit = 256
        /// The longest one evaluation may take before its process group is killed.
        var timeout: Duration = .seconds(900)
    }

    let store: HubStore
    let blobs: BlobStore
    let settings: Settings
    let logger: Logger
    private var queue: [HubEvaluation] = []
    private var running = 0
    /// The process groups of the evaluations running now.
    private var children: Set<pid_t> = []
    /// Set by ``stopRunning()``: nothing more starts.
    private var stopped = false
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

    init(store: HubStore, blobs: BlobStore, settings: Settings, logger: Logger) {
        self.store = store
        self.blobs = blobs
        self.settings = settings
        self.logger = logger
    }

    /// The evaluations waiting and running.
    var backlog: Int { queue.count + running }

    /// Queues evaluations (the store has them as pending); past the queue's limit they fail.
    func submit(_ evaluations: [HubEvaluation]) async {
        for evaluation in evaluations {
            if queue.count >= settings.queueLimit {
                var failed = evaluation
                failed.status = .failed
                failed.message =
                    "the hub's evaluation queue was full (\(settings.queueLimit) waiting): set the gate again to "
                    + "evaluate it"
                failed.finishedAt = HubStore.now()
                _ = try? await store.finish(failed)
                continue
            }
            queue.removeAll {
                $0.name == evaluation.name && $0.version == evaluation.version && $0.alias == evaluation.alias
            }
            queue.append(evaluation)
        }
        pump()
    }

    /// Stops the evaluations running (their process groups killed; they stay pending in the
    /// store and run again at the next start) and starts no more.
    func stopRunning() {
        stopped = true
        queue.removeAll()
        for child in children { kill(-child, SIGKILL) }
    }

    private func started(_ child: pid_t) { children.insert(child) }
    private func ended(_ child: pid_t) { children.remove(child) }

    private func pump() {
        while !stopped, running < settings.concurrency, !queue.isEmpty {
            let next = queue.removeFirst()
            running += 1
            Task { await self.run(next) }
        }
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
        running -= 1
        pump()
    }

    // MARK: One evaluation

    /// Runs one evaluation; `nil` when it is stale (the gate changed since it was queued).
    private func evaluate(_ evaluation: HubEvaluation) async -> HubEvaluation? {
        var result = evaluation
        result.finishedAt = nil
        func failed(_ message: String) -> HubEvaluation {
            result.status = .failed
            result.message = message
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
            // An absolute target: a relative one would be read from the link's own folder.
            guard symlink(Self.absolute(blobs.path(of: version.sha256)), link) == 0 else {
                return failed("cannot link the \(role)'s file: \(String(cString: strerror(errno)))")
            }
            compared += ["--compare", link]
        }
        let bundles = gate.bundles.map { Self.absolute("\(bundlesFolder)/\($0).testbundle") }
        let output = folder + "/out"
        let arguments =
            [evaluator, "evaluate"] + bundles + compared + ["--output", output, "--no-progress", "--restart"]
        let status = await Self.runProcess(
            arguments, log: folder + "/evaluate.log", timeout: settings.timeout,
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

    /// What the hub reads of `evaluate`'s `report.json`.
    struct ReportFile: Decodable {
        struct Test: Decodable {
            var path: String
        }

        struct Model: Decodable {
            struct Scores: Decodable {
                var top1: Double
                var top5: Double
            }

            struct Latency: Decodable {
                struct Summary: Decodable {
                    var median: Double
                    var p90: Double
                }

                var inference: Summary?
            }

            struct Agreement: Decodable {
                var top1: Double
            }

            var metric: [String: Double]
            var classification: Scores?
            var latency: Latency
            var agreement: Agreement?

            /// The evaluation's metrics, top-1 and top-5, the latency and the agreement as the
            /// gate rules name them (``HubGateRule/hubMetrics``).
            func metrics(size: Int, withAgreement: Bool) -> [String: Double] {
                var values = metric
                if let classification {
                    values["top1"] = classification.top1
                    values["top5"] = classification.top5
                }
                if let inference = latency.inference {
                    values["latency_p50_ms"] = inference.median
                    values["latency_p90_ms"] = inference.p90
                }
                if withAgreement, let agreement { values["agreement"] = agreement.top1 }
                values["size_bytes"] = Double(size)
                return values
            }
        }

        var test: Test
        var models: [Model]
    }

    // MARK: The child process

    /// Runs `arguments[0]` in a process group of its own, stdout and stderr to `log`; its exit
    /// status, -1 when it was killed for taking longer than `timeout`, -2 when it could not
    /// start.
    static func runProcess(
        _ arguments: [String], log: String, timeout: Duration, started: @Sendable (pid_t) async -> Void = { _ in },
        ended: @Sendable (pid_t) async -> Void = { _ in }
    ) async -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setpgroup(&attributes, 0)
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let spawned = argv.withUnsafeBufferPointer { pointers -> Int32 in
            guard let base = pointers.baseAddress else { return EINVAL }
            return posix_spawn(&pid, arguments[0], &actions, &attributes, UnsafeMutablePointer(mutating: base), environ)
        }
        guard spawned == 0 else { return -2 }
        let child = pid
        await started(child)
        // Polled: a blocking wait would hold one of Swift's few threads for minutes.
        let deadline = ContinuousClock.now + timeout
        var status: Int32 = 0
        var result: Int32?
        while result == nil {
            let done = waitpid(child, &status, WNOHANG)
            if done == child {
                result = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
            } else if done < 0 && errno != EINTR {
                result = -2
            } else if ContinuousClock.now >= deadline {
                kill(-child, SIGKILL)
                waitpid(child, &status, 0)
                result = -1
            } else {
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        await ended(child)
        return result ?? -2
    }
}
