import Foundation
import NetRunnerTestSupport
import TensorFlowLite
import Testing

@Suite("SignatureRunner")
struct SignatureRunnerTests {
    static let multiSignature = Fixtures.path(Fixtures.Synthetic.multiSignature)
    static let multiIO = Fixtures.path(Fixtures.Synthetic.multiIO)
    static let dynamicBatch = Fixtures.path(Fixtures.Synthetic.dynamicBatch)
    static let stringIO = Fixtures.path(Fixtures.Synthetic.stringIO)

    static func floats(_ tensor: Tensor) throws -> [Float] {
        try #require(TensorBytes.values(tensor.data, as: Float.self))
    }

    // MARK: - multi_signature.tflite: "add" (a + b) and "mul" (x * 3)

    @Test("Each signature of a model gets a runner with its key, inputs and outputs")
    func keysAndNames() throws {
        let interpreter = try Interpreter(modelPath: Self.multiSignature)
        #expect(interpreter.signatureKeys == ["add", "mul"])
        let add = try interpreter.signatureRunner(with: "add")
        #expect(add.signatureKey == "add")
        #expect(add.inputs == ["b", "a"])
        #expect(add.outputs == ["sum"])
        let mul = try interpreter.signatureRunner(with: "mul")
        #expect(mul.signatureKey == "mul")
        #expect(mul.inputs == ["x"])
        #expect(mul.outputs == ["product"])
    }

    @Test("invoke(with:) runs the named signature on the named inputs")
    func invokeWithInputs() throws {
        let interpreter = try Interpreter(modelPath: Self.multiSignature)
        let add = try interpreter.signatureRunner(with: "add")
        let a: [Float] = [1, 2, 3, 4]
        let b: [Float] = [0.5, -2, 100, 0.25]
        try add.invoke(with: ["a": TensorBytes.data(a), "b": TensorBytes.data(b)])
        let sum = try add.output(named: "sum")
        #expect(try Self.floats(sum) == zip(a, b).map { $0 + $1 })
        #expect(sum.shape == [1, 4])
        #expect(sum.dataType == .float32)

        let mul = try interpreter.signatureRunner(with: "mul")
        let x: [Float] = [1, -2, 0.5, 10, 0, 7]
        try mul.invoke(with: ["x": TensorBytes.data(x)])
        let product = try mul.output(named: "product")
        #expect(product.shape == [2, 3])
        #expect(try Self.floats(product) == x.map { $0 * 3 })
    }

    @Test("input(named:) and output(named:) describe the signature's tensors")
    func namedTensors() throws {
        let interpreter = try Interpreter(modelPath: Self.multiSignature)
        let mul = try interpreter.signatureRunner(with: "mul")
        let x = try mul.input(named: "x")
        #expect(x.name == "mul_x:0")
        #expect(x.dataType == .float32)
        #expect(x.shape == [2, 3])
        #expect(x.data.count == 24)
        let product = try mul.output(named: "product")
        #expect(product.name == "PartitionedCall_1:0")
        #expect(product.shape == [2, 3])
        // Allocated with the runner; zeros until the first invocation.
        #expect(product.data == Data(count: 24))
    }

    @Test("copy(_:toInputNamed:) then invoke() runs on the copied inputs")
    func copyThenInvoke() throws {
        let interpreter = try Interpreter(modelPath: Self.multiSignature)
        let add = try interpreter.signatureRunner(with: "add")
        try add.copy(TensorBytes.data([Float](arrayLiteral: 1, 1, 1, 1)), toInputNamed: "a")
        try add.copy(TensorBytes.data([Float](arrayLiteral: 2, 3, 4, 5)), toInputNamed: "b")
        #expect(try Self.floats(try add.input(named: "a")) == [1, 1, 1, 1])
        try add.invoke()
        #expect(try Self.floats(try add.output(named: "sum")) == [3, 4, 5, 6])
        // Inputs not named in invoke(with:) keep their contents.
        try add.invoke(with: ["a": TensorBytes.data([Float](arrayLiteral: 10, 10, 10, 10))])
        #expect(try Self.floats(try add.output(named: "sum")) == [12, 13, 14, 15])
    }

    @Test("A runner keeps its interpreter alive, and releases it when it goes")
    func runnerKeepsInterpreterAlive() throws {
        weak var weakInterpreter: Interpreter?
        weak var weakRunner: SignatureRunner?
        func makeRunner() throws -> SignatureRunner {
            let interpreter = try Interpreter(modelPath: Self.multiSignature)
            weakInterpreter = interpreter
            return try interpreter.signatureRunner(with: "mul")
        }
        do {
            let runner = try makeRunner()
            weakRunner = runner
            #expect(weakInterpreter != nil)
            let x: [Float] = [1, 2, 3, 4, 5, 6]
            try runner.invoke(with: ["x": TensorBytes.data(x)])
            #expect(try Self.floats(try runner.output(named: "product")) == [3, 6, 9, 12, 15, 18])
        }
        #expect(weakRunner == nil)
        #expect(weakInterpreter == nil)
    }

    @Test("Runners of one signature share its tensors, as in TensorFlow Lite")
    func runnersShareTensors() throws {
        let interpreter = try Interpreter(modelPath: Self.multiSignature)
        let first = try interpreter.signatureRunner(with: "mul")
        let second = try interpreter.signatureRunner(with: "mul")
        try first.invoke(with: ["x": TensorBytes.data([Float](repeating: 2, count: 6))])
        #expect(try Self.floats(try second.output(named: "product")) == [Float](repeating: 6, count: 6))
    }

    // MARK: - multi_io.tflite and dynamic_batch.tflite

    @Test("Inputs and outputs of several types are found by name")
    func multipleTypes() throws {
        let interpreter = try Interpreter(modelPath: Self.multiIO)
        let runner = try interpreter.signatureRunner(with: "serving_default")
        #expect(runner.inputs == ["zeta", "mid", "alpha"])
        #expect(runner.outputs == ["out_a", "out_b", "count"])
        let zeta: [Float] = [0.5, -1, 3]
        let alpha: [Int32] = [1, -7, 100]
        let mid: [UInt8] = [200, 100]
        try runner.invoke(with: [
            "zeta": TensorBytes.data(zeta), "alpha": TensorBytes.data(alpha), "mid": TensorBytes.data(mid),
        ])
        let outA = try runner.output(named: "out_a")
        let outB = try runner.output(named: "out_b")
        let count = try runner.output(named: "count")
        #expect(outA.dataType == .int32)
        #expect(outB.dataType == .float32)
        #expect(count.dataType == .int64)
        #expect(count.shape == [1])
        #expect(TensorBytes.values(outA.data, as: Int32.self) == alpha.map { $0 + 7 })
        #expect(TensorBytes.values(outB.data, as: Float.self) == zeta.map { $0 * 2 })
        #expect(TensorBytes.values(count.data, as: Int64.self) == [300])
        #expect(try runner.input(named: "mid").dataType == .uInt8)
    }

    @Test("resizeInput(named:toShape:) then invoke(with:) allocates again by itself")
    func resizeThenInvoke() throws {
        let interpreter = try Interpreter(modelPath: Self.dynamicBatch)
        let runner = try interpreter.signatureRunner(with: "serving_default")
        #expect(runner.inputs == ["x"])
        #expect(runner.outputs == ["y"])
        try runner.resizeInput(named: "x", toShape: [3, 4])
        let x: [Float] = (0..<12).map { Float($0) - 5.5 }
        // The buffers wait for the next allocation.
        #expect(throws: SignatureRunnerError.allocateTensorsRequired) {
            try runner.copy(TensorBytes.data(x), toInputNamed: "x")
        }
        try runner.invoke(with: ["x": TensorBytes.data(x)])
        let y = try runner.output(named: "y")
        #expect(y.shape == [3, 4])
        #expect(y.shapeSignature == [-1, 4])
        #expect(try Self.floats(y) == x.map { $0 * 2 + 1 })
        #expect(try runner.input(named: "x").shape == [3, 4])
    }

    @Test("allocateTensors after a resize makes the inputs writable again")
    func resizeThenAllocate() throws {
        let interpreter = try Interpreter(modelPath: Self.dynamicBatch)
        let runner = try interpreter.signatureRunner(with: "serving_default")
        try runner.resizeInput(named: "x", toShape: Tensor.Shape(2, 4))
        try runner.allocateTensors()
        let x: [Float] = [1, 2, 3, 4, 5, 6, 7, 8]
        try runner.copy(TensorBytes.data(x), toInputNamed: "x")
        try runner.invoke()
        #expect(try Self.floats(try runner.output(named: "y")) == x.map { $0 * 2 + 1 })
    }

    // MARK: - Errors

    @Test("An unknown signature key throws failedToCreateSignatureRunner")
    func unknownSignature() throws {
        let interpreter = try Interpreter(modelPath: Self.multiSignature)
        #expect(throws: SignatureRunnerError.failedToCreateSignatureRunner(signatureKey: "div")) {
            try interpreter.signatureRunner(with: "div")
        }
        #expect(throws: SignatureRunnerError.failedToCreateSignatureRunner(signatureKey: "")) {
            try interpreter.signatureRunner(with: "")
        }
    }

    @Test("An unknown input name throws failedToGetTensor for an input")
    func unknownInput() throws {
        let interpreter = try Interpreter(modelPath: Self.multiSignature)
        let add = try interpreter.signatureRunner(with: "add")
        let expected = SignatureRunnerError.failedToGetTensor(tensorType: "input", nameInSignature: "x")
        #expect(throws: expected) { try add.input(named: "x") }
        #expect(throws: expected) { try add.copy(Data(count: 16), toInputNamed: "x") }
        #expect(throws: expected) { try add.resizeInput(named: "x", toShape: [1, 4]) }
        #expect(throws: expected) { try add.invoke(with: ["x": Data(count: 16)]) }
        // An output's name is not an input's.
        #expect(throws: SignatureRunnerError.failedToGetTensor(tensorType: "input", nameInSignature: "sum")) {
            try add.input(named: "sum")
        }
    }

    @Test("An unknown output name throws failedToGetTensor for an output")
    func unknownOutput() throws {
        let interpreter = try Interpreter(modelPath: Self.multiSignature)
        let add = try interpreter.signatureRunner(with: "add")
        #expect(throws: SignatureRunnerError.failedToGetTensor(tensorType: "output", nameInSignature: "product")) {
            try add.output(named: "product")
        }
        #expect(throws: SignatureRunnerError.failedToGetTensor(tensorType: "output", nameInSignature: "a")) {
            try add.output(named: "a")
        }
    }

    @Test("Bytes of the wrong count throw invalidTensorDataCount", arguments: [0, 12, 20, 24])
    func invalidDataCount(count: Int) throws {
        let interpreter = try Interpreter(modelPath: Self.multiSignature)
        let add = try interpreter.signatureRunner(with: "add")
        let expected = SignatureRunnerError.invalidTensorDataCount(provided: count, required: 16)
        #expect(throws: expected) { try add.copy(Data(count: count), toInputNamed: "a") }
        #expect(throws: expected) { try add.invoke(with: ["b": Data(count: count)]) }
    }

    @Test(
        "Impossible shapes throw failedToResizeInputTensor with the input's name",
        arguments: [[-1, 4], [2, -1], [Int(Int32.max) + 1, 4]] as [[Int]])
    func invalidResize(dimensions: [Int]) throws {
        let interpreter = try Interpreter(modelPath: Self.dynamicBatch)
        let runner = try interpreter.signatureRunner(with: "serving_default")
        #expect(throws: SignatureRunnerError.failedToResizeInputTensor(inputName: "x")) {
            try runner.resizeInput(named: "x", toShape: Tensor.Shape(dimensions))
        }
    }

    @Test("A signature with string tensors throws invalidTensorDataType when its runner is made")
    func stringSignature() throws {
        let interpreter = try Interpreter(modelPath: Self.stringIO)
        #expect(throws: SignatureRunnerError.invalidTensorDataType) {
            try interpreter.signatureRunner(with: "serving_default")
        }
    }

    @Test("Error messages name the signature, tensor or input")
    func errorMessages() {
        let cases: [(SignatureRunnerError, String)] = [
            (
                .invalidTensorDataCount(provided: 3, required: 16),
                "Provided data count 3 must match the required count 16."
            ),
            (
                .invalidTensorDataType,
                "Tensor data type is unsupported or could not be determined due to a model error."
            ),
            (
                .failedToCreateSignatureRunner(signatureKey: "div"),
                "Failed to create a signature runner: the model has no signature \"div\"."
            ),
            (
                .failedToGetTensor(tensorType: "input", nameInSignature: "x"),
                "Failed to get the input tensor \"x\": the signature has no such input."
            ),
            (.failedToResizeInputTensor(inputName: "x"), "Failed to resize the input tensor \"x\"."),
            (.failedToCopyDataToInputTensor, "Failed to copy data to the input tensor."),
            (.failedToAllocateTensors, "Failed to allocate memory for the signature's tensors."),
            (.failedToInvokeSignature(signatureKey: "add"), "Failed to invoke the signature \"add\"."),
            (.allocateTensorsRequired, "Must call allocateTensors()."),
        ]
        for (error, message) in cases {
            #expect(error.description == message)
            #expect(error.errorDescription == message)
            #expect(error.localizedDescription == message)
        }
    }

    @Test("Errors compare and hash by case and values")
    func errorsEquatableHashable() {
        let set: Set<SignatureRunnerError> = [
            .failedToGetTensor(tensorType: "input", nameInSignature: "x"),
            .failedToGetTensor(tensorType: "output", nameInSignature: "x"),
            .failedToGetTensor(tensorType: "input", nameInSignature: "x"),
            .allocateTensorsRequired,
        ]
        #expect(set.count == 3)
    }
}
