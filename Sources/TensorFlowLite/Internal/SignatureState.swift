// The buffers and shapes of one signature of a compiled model.
//
// Invariants: when `isAllocated`, `inputBuffers`/`outputBuffers` hold one buffer per
// signature tensor, sized for `inputShapes`/`outputShapes`, and `inputRaw`/`outputRaw`
// hold their handles in the same order (kept so `invoke` allocates nothing). A resize
// clears `isAllocated` until `allocate()` runs again.

internal import CLiteRT
import FoundationEssentials

/// Why a signature's state refused an operation; the public types map these to their own
/// error enums.
enum SignatureStateError: Error {
    case allocateTensorsRequired
    case invokeRequired
    case unsupportedType(tensor: String, elementType: Int32)
    case dynamicShape(tensor: String, shape: [Int])
    case dataCount(provided: Int, required: Int)
    case resizeFailed(LiteRTCallError)
    case allocationFailed(LiteRTCallError)
    case runFailed(LiteRTCallError)

    /// The same error with the runtime's captured log attached to its call error, if it has one.
    func withRuntimeLog(_ log: String) -> SignatureStateError {
        guard !log.isEmpty else { return self }
        switch self {
        case .allocationFailed(var call):
            if call.runtimeLog.isEmpty { call.runtimeLog = log }
            return .allocationFailed(call)
        case .runFailed(var call):
            if call.runtimeLog.isEmpty { call.runtimeLog = log }
            return .runFailed(call)
        default:
            return self
        }
    }
}

/// Buffers, shapes and flags of one signature, shared by the ``Interpreter`` and every
/// ``SignatureRunner`` of that signature (as TensorFlow Lite shares the subgraph).
final class SignatureState {
    let info: SignatureInfo
    let compiled: CompiledModelHandle

    private(set) var inputShapes: [[Int]]
    private(set) var outputShapes: [[Int]]
    private(set) var inputBuffers: [TensorBufferHandle] = []
    private(set) var outputBuffers: [TensorBufferHandle] = []
    private var inputRaw: ContiguousArray<NRLiteRtTensorBuffer?> = []
    private var outputRaw: ContiguousArray<NRLiteRtTensorBuffer?> = []
    private(set) var isAllocated = false
    /// Whether a run has succeeded (kernels prepared); until then runs capture the runtime's log.
    private var hasRun = false
    /// Whether an input was resized since the compiled model last allocated.
    private var wasResized = true

    init(info: SignatureInfo, compiled: CompiledModelHandle) {
        self.info = info
        self.compiled = compiled
        self.inputShapes = info.inputs.map(\.shapeSignature)
        self.outputShapes = info.outputs.map(\.shapeSignature)
    }

    private var api: NRLiteRtAPI { compiled.api.pointee }

    /// Creates buffers for the current shapes; does nothing when they already exist.
    func allocate() throws(SignatureStateError) {
        if isAllocated { return }
        // Preparing kernels happens here: the runtime's complaints go into the error (and to the
        // logger when logging is on), not onto the user's terminal.
        let captured = RuntimeLog.capturing(verbose: compiled.verbose) { () throws -> Bool in
            try self.allocateBuffers()
            return true
        }
        if compiled.verbose { RuntimeLog.forward(captured.log) }
        switch captured.result {
        case .success: return
        case .failure(let error as SignatureStateError):
            throw error.withRuntimeLog(captured.log)
        case .failure(let error):
            throw .allocationFailed(
                LiteRTCallError(function: "allocate: \(error)", status: .runtimeFailure, runtimeLog: captured.log))
        }
    }

    private func allocateBuffers() throws(SignatureStateError) {
        var inputs: [[Int]] = []
        for index in info.inputs.indices {
            var layout = NRLiteRtLayout()
            do {
                try check(
                    api.GetCompiledModelInputTensorLayout(compiled.raw, info.index, index, &layout),
                    "LiteRtGetCompiledModelInputTensorLayout")
            } catch {
                throw .allocationFailed(error)
            }
            inputs.append(ModelSignatures.dimensions(of: layout))
        }
        var layouts = [NRLiteRtLayout](repeating: NRLiteRtLayout(), count: info.outputs.count)
        if !layouts.isEmpty {
            // Only ask the runtime to re-plan memory after a resize: on an untouched model
            // a corrupt shape could make it allocate gigabytes.
            do {
                try check(
                    api.GetCompiledModelOutputTensorLayouts(
                        compiled.raw, info.index, layouts.count, &layouts, wasResized),
                    "LiteRtGetCompiledModelOutputTensorLayouts")
            } catch {
                throw .allocationFailed(error)
            }
        }
        let outputs = layouts.map(ModelSignatures.dimensions(of:))

        let newInputs = try makeBuffers(info.inputs, shapes: inputs)
        let newOutputs = try makeBuffers(info.outputs, shapes: outputs)
        inputShapes = inputs
        outputShapes = outputs
        inputBuffers = newInputs
        outputBuffers = newOutputs
        inputRaw = ContiguousArray(newInputs.map { Optional($0.raw) })
        outputRaw = ContiguousArray(newOutputs.map { Optional($0.raw) })
        isAllocated = true
        wasResized = false
    }

    private func makeBuffers(_ tensors: [TensorInfo], shapes: [[Int]]) throws(SignatureStateError)
        -> [TensorBufferHandle]
    {
        var buffers: [TensorBufferHandle] = []
        for (tensor, shape) in zip(tensors, shapes) {
            guard let type = Tensor.DataType(elementType: tensor.elementType), let size = type.size else {
                throw .unsupportedType(tensor: tensor.name, elementType: tensor.elementType)
            }
            guard shape.allSatisfy({ $0 >= 0 }) else {
                throw .dynamicShape(tensor: tensor.name, shape: shape)
            }
            let (count, overflow) = Tensor.Shape(shape).elementCount.multipliedReportingOverflow(by: size)
            guard !overflow, count < Int(Int32.max) else {
                throw .allocationFailed(
                    LiteRTCallError(
                        function: "tensor \(tensor.name) of shape \(shape)", status: .memoryAllocationFailure))
            }
            do {
                buffers.append(
                    try TensorBufferHandle(
                        compiledModel: compiled, elementType: tensor.elementType, dimensions: shape, byteCount: count))
            } catch let error as LiteRTCallError {
                throw .allocationFailed(error)
            } catch {
                throw .allocationFailed(LiteRTCallError(function: "\(error)", status: .runtimeFailure))
            }
        }
        return buffers
    }

    /// Resizes input `index` (signature order); the caller must allocate again.
    func resizeInput(_ index: Int, to dimensions: [Int]) throws(SignatureStateError) {
        if isAllocated && inputShapes[index] == dimensions { return }
        guard dimensions.allSatisfy({ $0 >= 0 && $0 <= Int(Int32.max) }) else {
            throw .resizeFailed(LiteRTCallError(function: "resize to \(dimensions)", status: .invalidArgument))
        }
        let dims = dimensions.map { Int32($0) }
        let status = dims.withUnsafeBufferPointer { pointer in
            api.CompiledModelResizeInputTensorNonStrict(
                compiled.raw, info.index, index, pointer.baseAddress, pointer.count)
        }
        do {
            try check(status, "LiteRtCompiledModelResizeInputTensorNonStrict")
        } catch {
            throw .resizeFailed(error)
        }
        inputShapes[index] = dimensions
        isAllocated = false
        wasResized = true
        hasRun = false
    }

    /// Copies `data` into input `index` (signature order).
    func copy(_ data: Data, toInput index: Int) throws(SignatureStateError) {
        guard isAllocated else { throw .allocateTensorsRequired }
        let buffer = inputBuffers[index]
        guard data.count == buffer.memory.count else {
            throw .dataCount(provided: data.count, required: buffer.memory.count)
        }
        data.withUnsafeBytes { bytes in
            if let source = bytes.baseAddress, bytes.count > 0 {
                buffer.memory.base.copyMemory(from: source, byteCount: bytes.count)
            }
        }
    }

    /// Runs the signature on the current inputs.
    ///
    /// Until a run succeeds (the first one prepares the kernels, where a bad model fails), the
    /// runtime's stderr is captured and attached to the error, as while loading and compiling;
    /// after that, runs touch no file descriptor (the hot path stays lock-free).
    func invoke() throws(SignatureStateError) {
        guard isAllocated else { throw .allocateTensorsRequired }
        var status: NRLiteRtStatus
        var log = ""
        if hasRun {
            status = runCompiledModel()
        } else {
            let captured = RuntimeLog.capturing(verbose: compiled.verbose) { self.runCompiledModel() }
            log = captured.log
            if compiled.verbose { RuntimeLog.forward(log) }
            guard case .success(let result) = captured.result else {
                throw .runFailed(
                    LiteRTCallError(
                        function: "LiteRtRunCompiledModel", status: .runtimeFailure, runtimeLog: log))
            }
            status = result
        }
        do {
            try check(status, "LiteRtRunCompiledModel")
        } catch {
            var error = error
            error.runtimeLog = log
            throw .runFailed(error)
        }
        hasRun = true
    }

    /// One call of `LiteRtRunCompiledModel` on the buffers; allocates nothing.
    private func runCompiledModel() -> NRLiteRtStatus {
        let compiledModel = compiled.raw
        let signature = info.index
        let run = api.RunCompiledModel
        return inputRaw.withUnsafeMutableBufferPointer { inputs in
            outputRaw.withUnsafeMutableBufferPointer { outputs in
                run(compiledModel, signature, inputs.count, inputs.baseAddress, outputs.count, outputs.baseAddress)
            }
        }
    }

    /// A copy of input `index` (signature order).
    func inputTensor(_ index: Int) throws(SignatureStateError) -> Tensor {
        guard isAllocated else { throw .allocateTensorsRequired }
        return try tensor(info.inputs[index], shape: inputShapes[index], buffer: inputBuffers[index])
    }

    /// A copy of output `index` (signature order).
    ///
    /// As in TensorFlow Lite, outputs are
    /// readable once allocated (zeros until the first invocation).
    func outputTensor(_ index: Int) throws(SignatureStateError) -> Tensor {
        guard isAllocated else { throw .invokeRequired }
        return try tensor(info.outputs[index], shape: outputShapes[index], buffer: outputBuffers[index])
    }

    /// Input `index` described with the bytes of `data` (which were just copied in).
    func inputTensor(_ index: Int, data: Data) throws(SignatureStateError) -> Tensor {
        try tensor(info.inputs[index], shape: inputShapes[index], data: data)
    }

    private func tensor(_ info: TensorInfo, shape: [Int], buffer: TensorBufferHandle) throws(SignatureStateError)
        -> Tensor
    {
        try tensor(info, shape: shape, data: Data(bytes: buffer.memory.base, count: buffer.memory.count))
    }

    private func tensor(_ info: TensorInfo, shape: [Int], data: Data) throws(SignatureStateError) -> Tensor {
        guard let type = Tensor.DataType(elementType: info.elementType) else {
            throw .unsupportedType(tensor: info.name, elementType: info.elementType)
        }
        return Tensor(
            name: info.name, dataType: type, shape: Tensor.Shape(shape),
            shapeSignature: Tensor.Shape(info.shapeSignature), data: data,
            quantizationParameters: info.quantization.perTensor,
            perChannelQuantizationParameters: info.quantization.perChannel)
    }
}
