import Foundation
import NetRunnerTestSupport
import TensorFlowLite
import Testing

/// A delegate as TensorFlowLiteSwift code would pass one; LiteRT on Linux takes none.
private final class StubDelegate: Delegate {}

/// The deprecated TensorFlowLiteSwift spelling, used where the deprecation is expected.
@available(*, deprecated)
private func deprecatedOptions(threadCount: Int) -> InterpreterOptions {
    var options = InterpreterOptions()
    options.threadCount = threadCount
    options.isErrorLoggingEnabled = true
    return options
}

@Suite("Interpreter")
struct InterpreterTests {
    static let dynamicBatch = Fixtures.path(Fixtures.Synthetic.dynamicBatch)
    static let multiIO = Fixtures.path(Fixtures.Synthetic.multiIO)
    static let multiSignature = Fixtures.path(Fixtures.Synthetic.multiSignature)
    static let stringIO = Fixtures.path(Fixtures.Synthetic.stringIO)
    static let mobileNetUInt8 = Fixtures.path(Fixtures.MobileNet.uint8)
    static let chelseaUInt8 = "Tests/Fixtures/Reference/mobilenet_v2_1.0_224_uint8__chelsea__in0.bin"
    static let chelseaUInt8Output = "mobilenet_v2_1.0_224_uint8__chelsea__t1__out0.bin"
    static let batch1Input = "Tests/Fixtures/Reference/dynamic_batch__batch1__in0.bin"
    static let batch1Output = "dynamic_batch__batch1__t1__out0.bin"
    static let batch3Input = "Tests/Fixtures/Reference/dynamic_batch__batch3__in0.bin"
    static let batch3Output = "dynamic_batch__batch3__t1__out0.bin"

    /// dynamic_batch.tflite computes y = 2x + 1, row by row.
    static func dynamicBatchOutput(_ x: [Float]) -> [Float] {
        x.map { $0 * 2 + 1 }
    }

    /// Runs MobileNet uint8 on the chelsea reference input and returns the output bytes.
    static func runChelsea(_ interpreter: Interpreter) throws -> Data {
        try interpreter.allocateTensors()
        try interpreter.copy(try Fixtures.data(chelseaUInt8), toInputAt: 0)
        try interpreter.invoke()
        return try interpreter.output(at: 0).data
    }

    // MARK: - Options

    @Test("Options default to no thread count, XNNPACK off and error logging off")
    func optionsDefaults() {
        let options = Interpreter.Options()
        #expect(options.threadCount == nil)
        #expect(options.isXNNPackEnabled == false)
        #expect(options.isErrorLoggingEnabled == false)
    }

    @Test("Options compare and hash by every field")
    func optionsEquatableHashable() {
        var threads = Interpreter.Options()
        threads.threadCount = 2
        var xnnpack = Interpreter.Options()
        xnnpack.isXNNPackEnabled = true
        var logging = Interpreter.Options()
        logging.isErrorLoggingEnabled = true
        var threadsAgain = Interpreter.Options()
        threadsAgain.threadCount = 2

        #expect(threads == threadsAgain)
        #expect(threads != Interpreter.Options())
        #expect(xnnpack != Interpreter.Options())
        #expect(logging != Interpreter.Options())
        let set: Set = [Interpreter.Options(), threads, threadsAgain, xnnpack, logging]
        #expect(set.count == 4)
    }

    @Test("The deprecated InterpreterOptions name is Interpreter.Options")
    @available(*, deprecated)
    func deprecatedOptionsAlias() throws {
        let options: Interpreter.Options = deprecatedOptions(threadCount: 2)
        #expect(options.threadCount == 2)
        #expect(options.isErrorLoggingEnabled)
        let interpreter = try Interpreter(modelPath: Self.dynamicBatch, options: options)
        #expect(interpreter.options == options)
    }

    // MARK: - Creating

    @Test("An interpreter keeps the options and delegates it was created with")
    func keepsOptionsAndDelegates() throws {
        let plain = try Interpreter(modelPath: Self.dynamicBatch)
        #expect(plain.options == nil)
        #expect(plain.delegates == nil)

        var options = Interpreter.Options()
        options.threadCount = 2
        options.isXNNPackEnabled = true
        let configured = try Interpreter(modelPath: Self.dynamicBatch, options: options, delegates: [])
        #expect(configured.options == options)
        let delegates = try #require(configured.delegates)
        #expect(delegates.isEmpty)
    }

    @Test("The examples' delegate code compiles: CoreMLDelegate() is nil, MetalDelegate() is refused by name")
    func appleDelegates() throws {
        #expect(CoreMLDelegate() == nil)
        var coreML = CoreMLDelegate.Options()
        coreML.enabledDevices = .all
        #expect(CoreMLDelegate(options: coreML) == nil)
        var metalOptions = MetalDelegate.Options()
        metalOptions.isPrecisionLossAllowed = true
        metalOptions.waitType = .active
        let metal = MetalDelegate(options: metalOptions)
        #expect(metal.options.waitType == .active)
        #expect(
            throws: InterpreterError.failedToCreateInterpreter(
                reason: "MetalDelegate needs Apple's Metal GPU; on Linux LiteRT runs the model on the CPU with "
                    + "XNNPACK (create the interpreter without delegates).")
        ) {
            try Interpreter(modelPath: Self.dynamicBatch, delegates: [metal])
        }
    }

    @Test("Non-empty delegates are refused with failedToCreateInterpreter, from a path or from data")
    func delegatesAreRefused() throws {
        let delegate = StubDelegate()
        do {
            _ = try Interpreter(modelPath: Self.dynamicBatch, delegates: [delegate])
            Issue.record("init(modelPath:delegates:) accepted a delegate")
        } catch {
            guard case .failedToCreateInterpreter(let reason) = error as? InterpreterError else {
                Issue.record("expected failedToCreateInterpreter, got \(error)")
                return
            }
            #expect(reason.contains("delegates are not supported"))
        }
        let data = try Fixtures.data(Fixtures.Synthetic.dynamicBatch)
        do {
            _ = try Interpreter(modelData: data, delegates: [delegate, delegate])
            Issue.record("init(modelData:delegates:) accepted delegates")
        } catch {
            guard case .failedToCreateInterpreter(let reason) = error as? InterpreterError else {
                Issue.record("expected failedToCreateInterpreter, got \(error)")
                return
            }
            #expect(reason.contains("delegates are not supported"))
        }
    }

    @Test("Tensor counts, signature keys and model size describe the model")
    func modelDescription() throws {
        let mobileNet = try Interpreter(modelPath: Self.mobileNetUInt8)
        #expect(mobileNet.inputTensorCount == 1)
        #expect(mobileNet.outputTensorCount == 1)
        #expect(mobileNet.signatureKeys == ["serving_default"])
        #expect(mobileNet.modelSizeInBytes == 4_024_984)
        #expect(mobileNet.modelSizeInBytes == (try Fixtures.data(Fixtures.MobileNet.uint8)).count)

        let multiIO = try Interpreter(modelPath: Self.multiIO)
        #expect(multiIO.inputTensorCount == 3)
        #expect(multiIO.outputTensorCount == 3)
        #expect(multiIO.signatureKeys == ["serving_default"])
        #expect(multiIO.modelSizeInBytes == 1800)

        let multiSignature = try Interpreter(modelPath: Self.multiSignature)
        #expect(multiSignature.signatureKeys == ["add", "mul"])
        #expect(multiSignature.inputTensorCount == 2)
        #expect(multiSignature.outputTensorCount == 1)
    }

    @Test("init(modelPath:) and init(modelData:) give identical outputs on MobileNet uint8")
    func pathAndDataAgree() throws {
        let fromPath = try Interpreter(modelPath: Self.mobileNetUInt8)
        let fromData = try Interpreter(modelData: try Fixtures.data(Fixtures.MobileNet.uint8))
        #expect(fromData.modelSizeInBytes == fromPath.modelSizeInBytes)
        #expect(fromData.signatureKeys == fromPath.signatureKeys)
        let pathOutput = try Self.runChelsea(fromPath)
        let dataOutput = try Self.runChelsea(fromData)
        #expect(pathOutput == dataOutput)
        #expect(dataOutput == (try Fixtures.referenceOutput(Self.chelseaUInt8Output)))
        #expect(try fromPath.output(at: 0) == (try fromData.output(at: 0)))
    }

    @Test("The Data given to init(modelData:) may be overwritten and released right after")
    func modelDataMayBeReleased() throws {
        func makeInterpreter() throws -> Interpreter {
            var data = try Fixtures.data(Fixtures.MobileNet.uint8)
            let interpreter = try Interpreter(modelData: data)
            // If the interpreter still read these bytes, the run below would break.
            data.resetBytes(in: 0..<data.count)
            #expect(data.allSatisfy { $0 == 0 })
            return interpreter
        }
        let interpreter = try makeInterpreter()
        #expect(try Self.runChelsea(interpreter) == (try Fixtures.referenceOutput(Self.chelseaUInt8Output)))
    }

    @Test("Two threads, XNNPACK on and error logging on give the defaults' outputs bit for bit")
    func optionsKeepOutputs() throws {
        var options = Interpreter.Options()
        options.threadCount = 2
        options.isXNNPackEnabled = true
        options.isErrorLoggingEnabled = true
        let configured = try Interpreter(modelPath: Self.mobileNetUInt8, options: options)
        let output = try Self.runChelsea(configured)
        #expect(output == (try Fixtures.referenceOutput(Self.chelseaUInt8Output)))
    }

    // MARK: - Tensors

    @Test("copy(_:toInputAt:) returns the input tensor holding the data")
    func copyReturnsTensor() throws {
        let interpreter = try Interpreter(modelPath: Self.dynamicBatch)
        try interpreter.allocateTensors()
        let data = TensorBytes.data([Float](arrayLiteral: 0.5, -1, 2, 1000))
        let tensor = try interpreter.copy(data, toInputAt: 0)
        #expect(tensor.data == data)
        #expect(tensor.name == "serving_default_x:0")
        #expect(tensor.dataType == .float32)
        #expect(tensor.shape == [1, 4])
        #expect(tensor.shapeSignature == [-1, 4])
        #expect(tensor.quantizationParameters == nil)
        #expect(try interpreter.input(at: 0) == tensor)
    }

    @Test("Outputs read as zeros after allocateTensors and before the first invoke")
    func outputsAreZeroBeforeInvoke() throws {
        let interpreter = try Interpreter(modelPath: Self.dynamicBatch)
        try interpreter.allocateTensors()
        let output = try interpreter.output(at: 0)
        #expect(output.data == Data(count: 16))
        #expect(output.name == "PartitionedCall:0")
        #expect(output.shape == [1, 4])
    }

    @Test("A tensor read earlier keeps its bytes when the interpreter runs again")
    func tensorsAreCopies() throws {
        let interpreter = try Interpreter(modelPath: Self.dynamicBatch)
        try interpreter.allocateTensors()
        try interpreter.copy(TensorBytes.data([Float](repeating: 1, count: 4)), toInputAt: 0)
        try interpreter.invoke()
        let first = try interpreter.output(at: 0)
        try interpreter.copy(TensorBytes.data([Float](repeating: 10, count: 4)), toInputAt: 0)
        try interpreter.invoke()
        let second = try interpreter.output(at: 0)
        #expect(TensorBytes.values(first.data, as: Float.self) == [3, 3, 3, 3])
        #expect(TensorBytes.values(second.data, as: Float.self) == [21, 21, 21, 21])
        #expect(first != second)
    }

    @Test("allocateTensors is idempotent: calling it again keeps the tensors and their contents")
    func allocateIsIdempotent() throws {
        let interpreter = try Interpreter(modelPath: Self.dynamicBatch)
        try interpreter.allocateTensors()
        let x = try Fixtures.data(Self.batch1Input)
        try interpreter.copy(x, toInputAt: 0)
        try interpreter.allocateTensors()
        #expect(try interpreter.input(at: 0).data == x)
        try interpreter.invoke()
        let expected = try Fixtures.referenceOutput(Self.batch1Output)
        #expect(try interpreter.output(at: 0).data == expected)
        for _ in 0..<1000 {
            try interpreter.allocateTensors()
        }
        #expect(try interpreter.input(at: 0).data == x)
        #expect(try interpreter.output(at: 0).data == expected)
    }

    @Test("Running many times gives the same output each time")
    func invokeRepeats() throws {
        let interpreter = try Interpreter(modelPath: Self.dynamicBatch)
        try interpreter.allocateTensors()
        try interpreter.copy(try Fixtures.data(Self.batch1Input), toInputAt: 0)
        let expected = try Fixtures.referenceOutput(Self.batch1Output)
        for _ in 0..<100 {
            try interpreter.invoke()
            #expect(try interpreter.output(at: 0).data == expected)
        }
    }

    // MARK: - Resizing

    @Test("After resizeInput, tensors need allocateTensors; then the output follows the new batch")
    func resizeThenAllocate() throws {
        let interpreter = try Interpreter(modelPath: Self.dynamicBatch)
        try interpreter.allocateTensors()
        try interpreter.resizeInput(at: 0, to: [3, 4])

        let x = try Fixtures.data(Self.batch3Input)
        #expect(throws: InterpreterError.allocateTensorsRequired) { try interpreter.input(at: 0) }
        #expect(throws: InterpreterError.allocateTensorsRequired) { try interpreter.copy(x, toInputAt: 0) }
        #expect(throws: InterpreterError.allocateTensorsRequired) { try interpreter.invoke() }
        #expect(throws: InterpreterError.invokeInterpreterRequired) { try interpreter.output(at: 0) }

        try interpreter.allocateTensors()
        let input = try interpreter.input(at: 0)
        #expect(input.shape == [3, 4])
        #expect(input.shapeSignature == [-1, 4])
        #expect(input.data.count == 48)
        try interpreter.copy(x, toInputAt: 0)
        try interpreter.invoke()
        let output = try interpreter.output(at: 0)
        #expect(output.shape == [3, 4])
        #expect(output.shapeSignature == [-1, 4])
        let xs = try #require(TensorBytes.values(x, as: Float.self))
        #expect(xs.count == 12)
        #expect(TensorBytes.values(output.data, as: Float.self) == Self.dynamicBatchOutput(xs))
        #expect(output.data == (try Fixtures.referenceOutput(Self.batch3Output)))
    }

    @Test("Resizing back to one row runs the batch-1 case again")
    func resizeBack() throws {
        let interpreter = try Interpreter(modelPath: Self.dynamicBatch)
        try interpreter.resizeInput(at: 0, to: Tensor.Shape(3, 4))
        try interpreter.allocateTensors()
        try interpreter.resizeInput(at: 0, to: Tensor.Shape([1, 4]))
        try interpreter.allocateTensors()
        #expect(try interpreter.input(at: 0).shape == [1, 4])
        try interpreter.copy(try Fixtures.data(Self.batch1Input), toInputAt: 0)
        try interpreter.invoke()
        #expect(try interpreter.output(at: 0).shape == [1, 4])
        #expect(try interpreter.output(at: 0).data == (try Fixtures.referenceOutput(Self.batch1Output)))
    }

    @Test("Resizing an allocated input to its current shape keeps the tensors allocated")
    func resizeToSameShape() throws {
        let interpreter = try Interpreter(modelPath: Self.dynamicBatch)
        try interpreter.allocateTensors()
        let x = try Fixtures.data(Self.batch1Input)
        try interpreter.copy(x, toInputAt: 0)
        try interpreter.resizeInput(at: 0, to: [1, 4])
        #expect(try interpreter.input(at: 0).data == x)
        try interpreter.invoke()
        #expect(try interpreter.output(at: 0).data == (try Fixtures.referenceOutput(Self.batch1Output)))
    }

    // MARK: - Errors

    @Test("Input and output indices out of range throw invalidTensorIndex", arguments: [-1, 3, 4, 100, Int.min])
    func invalidIndex(index: Int) throws {
        let interpreter = try Interpreter(modelPath: Self.multiIO)
        try interpreter.allocateTensors()
        let expected = InterpreterError.invalidTensorIndex(index: index, maxIndex: 2)
        #expect(throws: expected) { try interpreter.input(at: index) }
        #expect(throws: expected) { try interpreter.output(at: index) }
        #expect(throws: expected) { try interpreter.copy(Data(count: 12), toInputAt: index) }
        #expect(throws: expected) { try interpreter.resizeInput(at: index, to: [1, 3]) }
    }

    @Test("The index check comes before the allocation check")
    func invalidIndexBeforeAllocation() throws {
        let interpreter = try Interpreter(modelPath: Self.dynamicBatch)
        #expect(throws: InterpreterError.invalidTensorIndex(index: 1, maxIndex: 0)) { try interpreter.input(at: 1) }
        #expect(throws: InterpreterError.invalidTensorIndex(index: -1, maxIndex: 0)) { try interpreter.output(at: -1) }
    }

    @Test("Copying the wrong number of bytes throws invalidTensorDataCount", arguments: [0, 12, 15, 17, 48])
    func invalidDataCount(count: Int) throws {
        let interpreter = try Interpreter(modelPath: Self.dynamicBatch)
        try interpreter.allocateTensors()
        #expect(throws: InterpreterError.invalidTensorDataCount(provided: count, required: 16)) {
            try interpreter.copy(Data(count: count), toInputAt: 0)
        }
    }

    @Test("Each input of a multi-input model checks its own byte count")
    func invalidDataCountPerInput() throws {
        let interpreter = try Interpreter(modelPath: Self.multiIO)
        try interpreter.allocateTensors()
        // zeta float32 [1, 3], mid uint8 [2], alpha int32 [1, 3].
        #expect(throws: InterpreterError.invalidTensorDataCount(provided: 2, required: 12)) {
            try interpreter.copy(Data(count: 2), toInputAt: 0)
        }
        #expect(throws: InterpreterError.invalidTensorDataCount(provided: 12, required: 2)) {
            try interpreter.copy(Data(count: 12), toInputAt: 1)
        }
        #expect(throws: InterpreterError.invalidTensorDataCount(provided: 3, required: 12)) {
            try interpreter.copy(Data(count: 3), toInputAt: 2)
        }
    }

    @Test("input, copy and invoke before allocateTensors throw allocateTensorsRequired")
    func allocateRequired() throws {
        let interpreter = try Interpreter(modelPath: Self.dynamicBatch)
        #expect(throws: InterpreterError.allocateTensorsRequired) { try interpreter.input(at: 0) }
        #expect(throws: InterpreterError.allocateTensorsRequired) {
            try interpreter.copy(Data(count: 16), toInputAt: 0)
        }
        #expect(throws: InterpreterError.allocateTensorsRequired) { try interpreter.invoke() }
    }

    @Test("output before allocateTensors throws invokeInterpreterRequired")
    func invokeRequired() throws {
        let interpreter = try Interpreter(modelPath: Self.dynamicBatch)
        #expect(throws: InterpreterError.invokeInterpreterRequired) { try interpreter.output(at: 0) }
    }

    @Test("A model with string tensors loads but refuses allocation with invalidTensorDataType")
    func stringTensorsAreRefused() throws {
        let interpreter = try Interpreter(modelPath: Self.stringIO)
        #expect(interpreter.inputTensorCount == 1)
        #expect(interpreter.outputTensorCount == 1)
        #expect(throws: InterpreterError.invalidTensorDataType) { try interpreter.allocateTensors() }
        #expect(throws: InterpreterError.allocateTensorsRequired) { try interpreter.input(at: 0) }
        #expect(throws: InterpreterError.allocateTensorsRequired) { try interpreter.invoke() }
    }

    @Test(
        "Impossible shapes throw failedToResizeInputTensor with the index",
        arguments: [[-1, 4], [3, -4], [Int(Int32.max) + 1, 4]] as [[Int]])
    func invalidResize(dimensions: [Int]) throws {
        let interpreter = try Interpreter(modelPath: Self.dynamicBatch)
        try interpreter.allocateTensors()
        #expect(throws: InterpreterError.failedToResizeInputTensor(index: 0)) {
            try interpreter.resizeInput(at: 0, to: Tensor.Shape(dimensions))
        }
        // A refused resize leaves the tensors as they were.
        #expect(try interpreter.input(at: 0).shape == [1, 4])
        try interpreter.invoke()
    }

    @Test("Error messages are TensorFlowLiteSwift's")
    func errorMessages() {
        let cases: [(InterpreterError, String)] = [
            (.invalidTensorIndex(index: 3, maxIndex: 1), "Invalid tensor index 3, max index is 1."),
            (
                .invalidTensorDataCount(provided: 12, required: 16),
                "Provided data count 12 must match the required count 16."
            ),
            (
                .invalidTensorDataType,
                "Tensor data type is unsupported or could not be determined due to a model error."
            ),
            (.failedToResizeInputTensor(index: 2), "Failed to resize input tensor at index 2."),
            (.failedToCopyDataToInputTensor, "Failed to copy data to input tensor."),
            (.failedToAllocateTensors, "Failed to allocate memory for input tensors."),
            (.allocateTensorsRequired, "Must call allocateTensors()."),
            (.invokeInterpreterRequired, "Must call invoke()."),
            (.tensorFlowLiteError("bad op"), "TensorFlow Lite Error: bad op"),
            // TensorFlowLiteSwift's text, followed by the reason LiteRT gives.
            (
                .failedToLoadModel(reason: "m.tflite: the file is empty."),
                "Failed to load the given model: m.tflite: the file is empty."
            ),
            (.failedToCreateInterpreter(reason: "x"), "Failed to create the interpreter: x"),
        ]
        for (error, message) in cases {
            #expect(error.description == message)
            #expect(error.errorDescription == message)
            #expect(error.localizedDescription == message)
            #expect("\(error)" == message)
        }
    }

    @Test("Errors compare and hash by case and values")
    func errorsEquatableHashable() {
        #expect(
            InterpreterError.invalidTensorIndex(index: 1, maxIndex: 0) != .invalidTensorIndex(index: 2, maxIndex: 0))
        #expect(InterpreterError.failedToLoadModel(reason: "a") != .failedToLoadModel(reason: "b"))
        let set: Set<InterpreterError> = [
            .allocateTensorsRequired, .allocateTensorsRequired, .invokeInterpreterRequired,
            .invalidTensorIndex(index: 1, maxIndex: 0), .invalidTensorIndex(index: 1, maxIndex: 0),
        ]
        #expect(set.count == 3)
    }
}

@Suite("Model metadata buffers")
struct ModelMetadataTests {
    @Test("MediaPipe's BlazeFace carries a TFLITE_METADATA flatbuffer; our converted MobileNet does not")
    func metadata() throws {
        let face = try Interpreter(modelPath: Fixtures.path("Models/face_detection_short_range.tflite"))
        let buffer = try #require(face.modelMetadata())
        // A FlatBuffer with the metadata schema's file identifier "M001" at offset 4.
        #expect(buffer.count > 100)
        #expect(Array(buffer[4..<8]) == Array("M001".utf8))
        #expect(face.modelMetadata(named: "no such entry") == nil)
        let mobileNet = try Interpreter(modelPath: Fixtures.path(Fixtures.MobileNet.uint8))
        #expect(mobileNet.modelMetadata() == nil)
    }
}
