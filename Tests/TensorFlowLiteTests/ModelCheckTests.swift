import Foundation
import NetRunnerTestSupport
import Testing

@testable import TensorFlowLite

/// `ModelCheck` runs each model in a child process that serves its own protocol
/// (`ModelCheck.runChildIfRequested`): the built `netrunner` next to the tests, passed
/// explicitly as `checkerPath:`.
@Suite("ModelCheck checks models in a child process")
struct ModelCheckTests {
    static let checker = Fixtures.netrunner

    /// Every committed model the interpreter can run (string tensors cannot be allocated).
    static let runnableModels =
        CorruptModels.smallModels.filter { $0 != Fixtures.Synthetic.stringIO }
        + CorruptModels.mobileNets

    @Test("Each committed model is accepted", arguments: runnableModels)
    func acceptsCommittedModels(model: String) throws {
        let verdict = try ModelCheck.check(modelPath: Fixtures.path(model), checkerPath: Self.checker)
        #expect(verdict == .accepted)
        #expect(verdict.isAccepted)
    }

    @Test("Thread options are passed to the checker")
    func acceptsWithThreads() throws {
        var options = Interpreter.Options()
        options.threadCount = 2
        let verdict = try ModelCheck.check(
            modelPath: Fixtures.path(Fixtures.MobileNet.uint8), options: options, checkerPath: Self.checker)
        #expect(verdict == .accepted)
    }

    @Test("A model with string tensors is rejected with the interpreter's words")
    func rejectsStringModel() throws {
        let verdict = try ModelCheck.check(
            modelPath: Fixtures.path(Fixtures.Synthetic.stringIO), checkerPath: Self.checker)
        #expect(verdict == .rejected(InterpreterError.invalidTensorDataType.description))
        #expect(!verdict.isAccepted)
    }

    @Test("A truncated model is rejected with a reason naming the file")
    func rejectsTruncatedModel() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let data = try Fixtures.data(Fixtures.MobileNet.uint8)
        let path = try folder.write(data.prefix(data.count / 3), named: "truncated.tflite")
        let verdict = try ModelCheck.check(modelPath: path, checkerPath: Self.checker)
        guard case .rejected(let reason) = verdict else {
            Issue.record("expected a rejection, got \(verdict)")
            return
        }
        #expect(reason.hasPrefix("Failed to load the given model: \(path): "))
        #expect(reason.contains("not a valid TensorFlow Lite flatbuffer"))
        #expect(!verdict.isAccepted)
    }

    @Test("A missing model is rejected with a reason naming the file")
    func rejectsMissingModel() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("missing.tflite")
        let verdict = try ModelCheck.check(modelPath: path, checkerPath: Self.checker)
        #expect(verdict == .rejected("Failed to load the given model: \(path): no such file or directory."))
    }

    @Test("The check child runs at the nice value asked, and at this process's when none is")
    func childNiceness() throws {
        let model = Fixtures.path(Fixtures.Synthetic.multiIO)
        // This process's nice value, read the way ps reads it (field 19 of /proc/self/stat).
        let stat = try String(contentsOfFile: "/proc/self/stat", encoding: .utf8)
        let fields = stat[stat.index(after: try #require(stat.lastIndex(of: ")")))...].split(separator: " ")
        let own = try #require(Int32(fields[16]))
        let asked = min(own + 7, 19)
        let niced = try ModelCheck.report(modelPath: model, checkerPath: Self.checker, niceness: asked)
        #expect(niced.verdict == .accepted)
        #expect(niced.niceness == asked)
        let plain = try ModelCheck.report(modelPath: model, checkerPath: Self.checker)
        #expect(plain.verdict == .accepted)
        #expect(plain.niceness == own)
        // A value below this process's is not for a child to take (it would need a privilege).
        #expect(ModelCheck.nicenessEnvironment(0).isEmpty)
        #expect(ModelCheck.nicenessEnvironment(40) == ["\(ModelCheck.nicenessEnvironmentVariable)=19"])
    }

    @Test("A child's processor time is read as getrusage counts this process's")
    func processorTime() {
        var sum = 0.0
        for index in 0..<20_000_000 { sum += Double(index & 7) }
        #expect(sum > 0)
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let reference =
            Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        let read = ChildProcess.processorSeconds(getpid())
        // /proc counts in ticks (10 ms), read a moment after getrusage.
        #expect(read > 0 && abs(read - reference) < 0.1, "\(read) s against getrusage's \(reference) s")
    }

    @Test("A checker that cannot answer in time gives timedOut with the limit")
    func timesOut() throws {
        let verdict = try ModelCheck.check(
            modelPath: Fixtures.path(Fixtures.MobileNet.float32), timeout: 0.001, checkerPath: Self.checker)
        #expect(verdict == .timedOut(seconds: 0.001))
        #expect(!verdict.isAccepted)
    }

    @Test("Corrupted models are accepted or rejected, never crash the checker or hang it")
    func corruptedModels() throws {
        let corpus = try CorruptModels(seed: 0x00C0_FFEE)
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var verdicts: [String: Int] = [:]
        // Small models only: each check starts a process, and the MobileNets are fuzzed in process.
        var index = 0
        var checked = 0
        while checked < 36 {
            let model = corpus.model(at: index)
            index += 1
            guard CorruptModels.smallModels.contains(model.source) else { continue }
            checked += 1
            let path = try folder.write(model.data, named: "\(model.index).tflite")
            let verdict = try ModelCheck.check(modelPath: path, timeout: 60, checkerPath: Self.checker)
            switch verdict {
            case .accepted:
                verdicts["accepted", default: 0] += 1
            case .rejected(let reason):
                verdicts["rejected", default: 0] += 1
                #expect(!reason.isEmpty, "\(model)")
            case .crashed, .timedOut:
                Issue.record("\(model): \(verdict)")
            }
        }
        #expect(verdicts["rejected", default: 0] > 0)
        #expect(verdicts.values.reduce(0, +) == 36)
    }

    @Test("A model that used to abort the runtime is now rejected before it reaches it")
    func formerCrasher() throws {
        // MobileNet int8 with its input's quantization scale zeroed: LiteRT 2.3.0 (and Python's
        // interpreter) abort in a kernel's CHECK while allocating. The integrity check refuses
        // a run-time tensor with scale 0, so the child now reports a rejection.
        var data = try Fixtures.data(Fixtures.MobileNet.int8)
        let scale = TensorBytes.data([Float(1) / 255])
        let range = try #require(data.firstRange(of: scale))
        data.replaceSubrange(range, with: TensorBytes.data([Float(0)]))
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = try folder.write(data, named: "zero-input-scale.tflite")
        let verdict = try ModelCheck.check(modelPath: path, checkerPath: Self.checker)
        guard case .rejected(let reason) = verdict else {
            Issue.record("expected a rejection, got \(verdict)")
            return
        }
        #expect(reason.contains("zero-input-scale.tflite"))
        #expect(reason.contains("quantization scale 0"))
    }

    @Test("A checker that dies of a signal gives crashed, naming the file and the signal")
    func crashes() throws {
        // No known model crashes the runtime past the integrity checks any more, so the child's
        // crash is simulated: a checker that aborts itself, as the runtime would.
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let checker = try Self.script("kill -ABRT $$", named: "aborting-checker", in: folder)
        let path = Fixtures.path(Fixtures.MobileNet.int8)
        let verdict = try Self.checkRetryingBusyScript(modelPath: path, checkerPath: checker)
        #expect(verdict == .crashed("the runtime crashed on \(path) (signal 6, SIGABRT)"))
        #expect(!verdict.isAccepted)
    }

    @Test("runInProcess runs a good model and throws the interpreter's error for a bad one")
    func runInProcess() throws {
        try ModelCheck.runInProcess(modelPath: Fixtures.path(Fixtures.Synthetic.multiIO))
        var options = Interpreter.Options()
        options.threadCount = 2
        try ModelCheck.runInProcess(modelPath: Fixtures.path(Fixtures.Synthetic.dynamicBatch), options: options)
        #expect(throws: InterpreterError.invalidTensorDataType) {
            try ModelCheck.runInProcess(modelPath: Fixtures.path(Fixtures.Synthetic.stringIO))
        }
    }

    // MARK: - The child's side

    @Test(
        "Ordinary argument vectors are not checker requests",
        arguments: [
            [], ["netrunner"], ["netrunner", "check", "model.tflite"],
            ["netrunner", "check", "--in-process", "--threads", "2", "model.tflite"],
            ["netrunner", "check", ModelCheck.childMarker, "1", "model.tflite"],
            ["netrunner", "--help"], ["netrunner", "--netrunner-model-check", "1", "model.tflite"],
        ])
    func ordinaryArguments(arguments: [String]) {
        #expect(ModelCheck.runChildIfRequested(arguments: arguments) == nil)
    }

    @Test("The parent's request is the marker, the thread count, the budget and the model, and nothing else")
    func requestArguments() throws {
        // A checker that echoes its arguments and refuses: the parent reports them as the reason.
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let checker = try Self.script("printf '%s\\n' \"$@\"\nexit 2", named: "echo-checker", in: folder)
        let model = Fixtures.path(Fixtures.Synthetic.multiIO)
        var options = Interpreter.Options()
        options.threadCount = 2
        let verdict = try Self.checkRetryingBusyScript(modelPath: model, options: options, checkerPath: checker)
        let budget = String(ModelCheck.defaultMemoryBudget)
        #expect(verdict == .rejected(["--netrunner-model-check-child=3", "2", budget, model].joined(separator: "\n")))
        #expect(
            ModelCheck.childArguments(executable: checker, modelPath: model, options: nil, budget: 64 << 20)
                == [checker, "--netrunner-model-check-child=3", "1", "67108864", model])
    }

    @Test("The child runs a request in process and answers with the status the parent reads")
    func childStatuses() {
        var reports: [String] = []
        let good = ModelCheck.childArguments(
            executable: "checker", modelPath: Fixtures.path(Fixtures.Synthetic.multiIO), options: nil)
        #expect(ModelCheck.runChild(arguments: good) { reports.append($0) } == ModelCheck.ChildStatus.accepted)
        // An accepted model: the memory it took, for the parent's limit.
        #expect(reports.count == 1 && reports[0].hasPrefix("memory "), "\(reports)")
        #expect(ModelCheck.parseAcceptedAnswer(reports.first ?? "").memory != nil, "\(reports)")
        reports = []

        let bad = ModelCheck.childArguments(
            executable: "checker", modelPath: Fixtures.path(Fixtures.Synthetic.stringIO), options: nil)
        #expect(ModelCheck.runChild(arguments: bad) { reports.append($0) } == ModelCheck.ChildStatus.rejected)
        #expect(reports == [InterpreterError.invalidTensorDataType.description])

        for request in [
            ["checker", "--netrunner-model-check-child=1", "1", "model.tflite"],
            ["checker", "--netrunner-model-check-child=2", "1", "model.tflite"],
            ["checker", ModelCheck.childMarker, "model.tflite"],
            ["checker", ModelCheck.childMarker, "1", "model.tflite"],
            ["checker", ModelCheck.childMarker, "two", "512", "model.tflite"],
            ["checker", ModelCheck.childMarker, "1", "-1", "model.tflite"],
            ["checker", ModelCheck.childMarker, "1", "512", "model.tflite", "extra"],
        ] {
            reports = []
            #expect(
                ModelCheck.runChild(arguments: request) { reports.append($0) }
                    == ModelCheck.ChildStatus.unsupportedRequest, "\(request)")
            #expect(reports.count == 1 && reports[0].contains("model check protocol 3"), "\(request)")
        }
        // Distinct, and not ArgumentParser's usage status (64) nor a signal's 128 + n.
        let statuses = [
            ModelCheck.ChildStatus.accepted, ModelCheck.ChildStatus.rejected, ModelCheck.ChildStatus.unsupportedRequest,
            ModelCheck.ChildStatus.overBudget,
        ]
        #expect(statuses == [0, 2, 3, 4])
    }

    @Test("The built netrunner serves requests before it parses its command line")
    func netrunnerServesRequests() throws {
        let good = try ProcessResult.run(
            Self.checker, [ModelCheck.childMarker, "1", "536870912", Fixtures.path(Fixtures.Synthetic.multiIO)])
        #expect(good.status == ModelCheck.ChildStatus.accepted, "\(good.stdout)")
        #expect(good.stdout.hasPrefix("memory ") && good.stdout.hasSuffix("\n"), "\(good.stdout)")
        let missing = "/nonexistent/model.tflite"
        let bad = try ProcessResult.run(Self.checker, [ModelCheck.childMarker, "1", "536870912", missing])
        #expect(bad.status == ModelCheck.ChildStatus.rejected)
        #expect(bad.stdout == "Failed to load the given model: \(missing): no such file or directory.\n")
        let other = try ProcessResult.run(Self.checker, ["--netrunner-model-check-child=9", "1", missing])
        #expect(other.status == ModelCheck.ChildStatus.unsupportedRequest)
    }

    @Test("A checker that does not understand the request makes check throw, not reject the model")
    func unsupportedRequestThrows() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let checker = try Self.script("echo 'protocol 2 only'\nexit 3", named: "new-checker", in: folder)
        #expect(
            throws: InterpreterError.tensorFlowLiteError(
                "the model checker \(checker) cannot run this check: protocol 2 only")
        ) {
            try Self.checkRetryingBusyScript(modelPath: Fixtures.path(Fixtures.Synthetic.multiIO), checkerPath: checker)
        }
    }

    /// Writes an executable shell script, its descriptor closed on exec.
    ///
    /// Other tests start processes in parallel: a child forked while the script is open for
    /// writing would make starting it fail with ETXTBSY for as long as that child lives.
    static func script(_ body: String, named name: String, in folder: TemporaryFolder) throws -> String {
        let path = folder.path(name)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        #expect(descriptor >= 0)
        var text = "#!/bin/sh\n\(body)\n"
        let written = text.withUTF8 { write(descriptor, $0.baseAddress, $0.count) }
        #expect(written == text.utf8.count)
        close(descriptor)
        return path
    }

    /// `ModelCheck.check` with a freshly written checker script, retried while the script is
    /// still busy (a child forked by another test between `open` and `exec` can hold it).
    static func checkRetryingBusyScript(
        modelPath: String, options: Interpreter.Options? = nil, checkerPath: String
    ) throws -> ModelCheck.Verdict {
        var attempt = 0
        while true {
            do {
                return try ModelCheck.check(modelPath: modelPath, options: options, checkerPath: checkerPath)
            } catch InterpreterError.tensorFlowLiteError(let message)
                where message.hasSuffix("text file busy.") && attempt < 50
            {
                attempt += 1
                usleep(100_000)
            }
        }
    }

    // MARK: - Finding the checker

    @Test("An explicit checker path that is executable is used as it is")
    func explicitCheckerPath() throws {
        #expect(try ModelCheck.checkerPath(Self.checker) == Self.checker)
    }

    @Test("An explicit checker path that does not exist throws, naming it")
    func missingExplicitCheckerPath() throws {
        let path = "/nonexistent/netrunner"
        #expect(
            throws: InterpreterError.tensorFlowLiteError(
                "no model checker at \(path) (the checker path given): it does not exist or is not executable.")
        ) {
            try ModelCheck.checkerPath(path)
        }
        #expect(throws: InterpreterError.self) {
            try ModelCheck.check(
                modelPath: Fixtures.path(Fixtures.Synthetic.dynamicBatch), checkerPath: path)
        }
    }

    @Test("An explicit checker path to a file that is not executable throws")
    func nonExecutableCheckerPath() throws {
        let model = Fixtures.path(Fixtures.Synthetic.dynamicBatch)
        #expect(
            throws: InterpreterError.tensorFlowLiteError(
                "no model checker at \(model) (the checker path given): it does not exist or is not executable.")
        ) {
            try ModelCheck.checkerPath(model)
        }
    }

    @Test(
        "Without a choice, the checker is the netrunner beside the test executable",
        .enabled(if: ProcessInfo.processInfo.environment[ModelCheck.checkerEnvironmentVariable] == nil))
    func defaultCheckerPath() throws {
        #expect(try ModelCheck.checkerPath() == Self.checker)
        #expect(ModelCheck.checkerEnvironmentVariable == "NETRUNNER_CHECKER")
    }

    @Test("Verdicts compare by case and value")
    func verdictsAreEquatable() {
        #expect(ModelCheck.Verdict.accepted.isAccepted)
        #expect(!ModelCheck.Verdict.rejected("x").isAccepted)
        #expect(!ModelCheck.Verdict.crashed("x").isAccepted)
        #expect(!ModelCheck.Verdict.timedOut(seconds: 1).isAccepted)
        #expect(ModelCheck.Verdict.rejected("a") != .rejected("b"))
        #expect(ModelCheck.Verdict.timedOut(seconds: 1) != .timedOut(seconds: 2))
        let set: Set<ModelCheck.Verdict> = [.accepted, .accepted, .rejected("a"), .crashed("a")]
        #expect(set.count == 3)
    }
}
