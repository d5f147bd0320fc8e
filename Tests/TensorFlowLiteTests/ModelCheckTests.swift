import Foundation
import NetRunnerTestSupport
import TensorFlowLite
import Testing

/// `ModelCheck` runs each model in a `netrunner check --in-process` child: the built
/// `netrunner` next to the tests, passed explicitly as `checkerPath:`.
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
        let checker = try folder.write(Data("#!/bin/sh\nkill -ABRT $$\n".utf8), named: "aborting-checker")
        #expect(chmod(checker, 0o755) == 0)
        let path = Fixtures.path(Fixtures.MobileNet.int8)
        let verdict = try ModelCheck.check(modelPath: path, checkerPath: checker)
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
