import Foundation
import NetRunnerTestSupport
import TensorFlowLite
import Testing

/// Corrupted models loaded and run in this process: every one must either work or throw an
/// `InterpreterError`. A crash takes the whole test run down, which is the point.
///
/// To find the input behind a crash, set `NETRUNNER_FUZZ_CURRENT` to a file path: each model
/// is written there before it runs, so after a crash the file holds the culprit. The
/// corpus is deterministic, so `#index` in any message names the same bytes every time.
@Suite("Corrupted models throw, never crash")
struct FuzzTests {
    static let seed: UInt64 = 0x4E65_7452_756E_6E72
    static let count = 3000

    /// The outcome of one model: "success" or the `InterpreterError` case's name.
    static func outcome(of error: InterpreterError) -> String {
        switch error {
        case .invalidTensorIndex: "invalidTensorIndex"
        case .invalidTensorDataCount: "invalidTensorDataCount"
        case .invalidTensorDataType: "invalidTensorDataType"
        case .failedToLoadModel: "failedToLoadModel"
        case .failedToCreateInterpreter: "failedToCreateInterpreter"
        case .failedToResizeInputTensor: "failedToResizeInputTensor"
        case .failedToCopyDataToInputTensor: "failedToCopyDataToInputTensor"
        case .failedToAllocateTensors: "failedToAllocateTensors"
        case .allocateTensorsRequired: "allocateTensorsRequired"
        case .invokeInterpreterRequired: "invokeInterpreterRequired"
        case .tensorFlowLiteError: "tensorFlowLiteError"
        }
    }

    /// Loads `data`, allocates, copies zeros into every input, invokes and reads every output.
    static func run(_ data: Data) throws {
        let interpreter = try Interpreter(modelData: data)
        try interpreter.allocateTensors()
        for index in 0..<interpreter.inputTensorCount {
            let input = try interpreter.input(at: index)
            try interpreter.copy(Data(count: input.data.count), toInputAt: index)
        }
        try interpreter.invoke()
        for index in 0..<interpreter.outputTensorCount {
            _ = try interpreter.output(at: index)
        }
    }

    @Test("The corpus is deterministic and uses every model and every mutation")
    func corpusIsDeterministic() throws {
        let first = try CorruptModels(seed: Self.seed)
        let second = try CorruptModels(seed: Self.seed)
        var sources: Set<String> = []
        var mutations: Set<CorruptModel.Mutation> = []
        for index in 0..<Self.count {
            let model = first.model(at: index)
            sources.insert(model.source)
            mutations.insert(model.mutation)
            if index % 50 == 0 {
                let again = second.model(at: index)
                #expect(again.data == model.data, "\(model)")
                #expect(again.description == model.description)
            }
        }
        #expect(sources == Set(CorruptModels.smallModels + CorruptModels.mobileNets))
        #expect(mutations == Set(CorruptModel.Mutation.allCases))
    }

    @Test("Thousands of corrupted models load and run in process or throw InterpreterError", .timeLimit(.minutes(5)))
    func corruptedModelsNeverCrash() throws {
        let corpus = try CorruptModels(seed: Self.seed)
        let currentFile = ProcessInfo.processInfo.environment["NETRUNNER_FUZZ_CURRENT"]
        var outcomes: [String: Int] = [:]
        var changed = 0
        let clock = ContinuousClock()
        let start = clock.now
        for index in 0..<Self.count {
            let model = corpus.model(at: index)
            if let currentFile {
                try model.data.write(to: URL(fileURLWithPath: currentFile))
            }
            if model.data != corpus.original(model.source) { changed += 1 }
            do {
                try Self.run(model.data)
                outcomes["success", default: 0] += 1
            } catch let error as InterpreterError {
                outcomes[Self.outcome(of: error), default: 0] += 1
            } catch {
                outcomes["other error", default: 0] += 1
                Issue.record("\(model): threw \(type(of: error)), not an InterpreterError: \(error)")
            }
        }
        let elapsed = clock.now - start
        let summary = outcomes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        print("Fuzz: \(Self.count) corrupted models in \(elapsed): \(summary)")

        #expect(outcomes.values.reduce(0, +) == Self.count)
        #expect(outcomes["other error"] == nil)
        // Most of the corpus must really be broken, or it proves nothing.
        #expect(changed >= Self.count * 95 / 100)
        #expect(outcomes["failedToLoadModel", default: 0] >= Self.count / 2, "\(summary)")
    }
}
