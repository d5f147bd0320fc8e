public import FoundationEssentials

/// A TensorFlow Lite interpreter that runs a model on the LiteRT runtime.
///
/// Source-compatible with TensorFlowLiteSwift's `Interpreter`:
///
///     var options = Interpreter.Options()
///     options.threadCount = 2
///     let interpreter = try Interpreter(modelPath: "mobilenet_v2.tflite", options: options)
///     try interpreter.allocateTensors()
///     try interpreter.copy(rgbData, toInputAt: 0)
///     try interpreter.invoke()
///     let scores = try interpreter.output(at: 0)
///
/// The model file is read into memory and handed to the runtime as bytes, which the
/// runtime verifies; a truncated or corrupt file throws
/// ``InterpreterError/failedToLoadModel(reason:)`` instead of crashing. To accept a model
/// from an untrusted source, check it first in a child process with ``ModelCheck``.
///
/// - Note: An interpreter is *not* thread-safe: use each one from one thread (or task) at a
///   time, and create one per thread to run in parallel. It keeps its model bytes, the
///   compiled model and its tensor buffers alive until it is released.
public final class Interpreter {
    /// The options the interpreter was created with.
    public let options: Options?

    /// The delegates the interpreter was created with (always empty or `nil` on LiteRT).
    public let delegates: [any Delegate]?

    /// The number of input tensors of the model's main signature.
    public var inputTensorCount: Int { main.info.inputs.count }

    /// The number of output tensors of the model's main signature.
    public var outputTensorCount: Int { main.info.outputs.count }

    /// The keys of the model's signatures, in the model's order.
    ///
    /// A model converted without signatures has one, which LiteRT names
    /// `<placeholder signature>`.
    public let signatureKeys: [String]

    /// The size in bytes of the model the interpreter runs.
    public var modelSizeInBytes: Int { compiled.model.bytes.count }

    /// What the model runs on: ``Accelerator/cpu`` or ``Accelerator/gpu`` (``Accelerator/auto``
    /// resolved).
    public var accelerator: Accelerator { compiled.usesGPU ? .gpu : .cpu }

    /// Whether every operator of the model runs on ``accelerator``.
    ///
    /// LiteRT's `is_fully_accelerated`: always `true` on the CPU; on the GPU, `false` means some
    /// operators run on the CPU between GPU parts.
    public var isFullyAccelerated: Bool { compiled.isFullyAccelerated }

    /// Why an interpreter asked for ``Accelerator/auto`` runs on the CPU (what is missing for
    /// the GPU), or `nil` when it runs where it was asked to.
    public let acceleratorFallbackReason: String?

    let compiled: CompiledModelHandle
    /// One state per signature, shared with the signature runners.
    let states: [SignatureState]
    private let main: SignatureState

    /// Creates an interpreter for the model file at `modelPath`.
    ///
    /// - Parameters:
    ///   - modelPath: The path of a `.tflite` file.
    ///   - options: Thread count and logging; `nil` runs single-threaded.
    ///   - delegates: Must be `nil` or empty: LiteRT runs on the CPU here.
    /// - Throws: ``InterpreterError/failedToLoadModel(reason:)`` when the file is missing,
    ///   unreadable or not a valid TensorFlow Lite model;
    ///   ``InterpreterError/failedToCreateInterpreter(reason:)`` when the runtime cannot
    ///   prepare it; ``InterpreterError/tensorFlowLiteError(_:)`` when the runtime library
    ///   is not installed.
    public convenience init(modelPath: String, options: Options? = nil, delegates: [any Delegate]? = nil) throws {
        try Self.checkDelegates(delegates)
        let bytes = try ModelFile.read(modelPath)
        try self.init(bytes: bytes, source: modelPath, options: options, delegates: delegates)
    }

    /// Creates an interpreter for a model held in memory.
    ///
    /// The bytes are copied into memory the interpreter owns, so `modelData` may be released
    /// as soon as this returns.
    ///
    /// - Parameters:
    ///   - modelData: The bytes of a `.tflite` model.
    ///   - options: Thread count and logging; `nil` runs single-threaded.
    ///   - delegates: Must be `nil` or empty: LiteRT runs on the CPU here.
    /// - Throws: The same errors as ``init(modelPath:options:delegates:)``.
    public convenience init(modelData: Data, options: Options? = nil, delegates: [any Delegate]? = nil) throws {
        try Self.checkDelegates(delegates)
        let copy = modelData.withUnsafeBytes { AlignedMemory(copying: $0) }
        guard let copy else {
            throw InterpreterError.failedToLoadModel(reason: "not enough memory to copy \(modelData.count) bytes.")
        }
        try ModelFile.validateHeader(copy, source: "model data")
        try self.init(bytes: copy, source: "model data", options: options, delegates: delegates)
    }

    init(bytes: AlignedMemory, source: String, options: Options?, delegates: [any Delegate]?) throws {
        let verbose = options?.isErrorLoggingEnabled ?? false
        let threads = options?.threadCount ?? 1
        let prepared: Prepared
        var fallbackReason: String?
        switch options?.accelerator ?? .cpu {
        case .cpu:
            prepared = try Self.prepare(
                bytes, source: source, environment: try EnvironmentHandle.shared(), gpu: false, threads: threads,
                verbose: verbose)
        case .gpu:
            do {
                prepared = try Self.prepareForGPU(
                    bytes, source: source, threads: threads, options: options, verbose: verbose)
            } catch let reason as GPUUnavailable {
                throw InterpreterError.failedToCreateInterpreter(reason: "\(source): the GPU is not usable: \(reason).")
            }
        case .auto:
            do {
                if let known = GPUVerdict.unavailable { throw known }
                prepared = try Self.prepareForGPU(
                    bytes, source: source, threads: threads, options: options, keepsQuantizedOnCPU: true,
                    verbose: verbose)
            } catch let reason as GPUUnavailable {
                fallbackReason = reason.description
                prepared = try Self.prepare(
                    bytes, source: source, environment: try EnvironmentHandle.shared(), gpu: false, threads: threads,
                    verbose: verbose)
            }
        }
        let compiled = prepared.compiled
        self.compiled = compiled
        let states = prepared.signatures.map { SignatureState(info: $0, compiled: compiled) }
        self.states = states
        self.main = states[prepared.mainIndex]
        self.signatureKeys = prepared.signatures.map(\.key)
        self.options = options
        self.delegates = delegates
        self.acceleratorFallbackReason = fallbackReason
    }

    /// A model loaded, checked and compiled in one environment.
    private struct Prepared {
        let compiled: CompiledModelHandle
        let signatures: [SignatureInfo]
        let mainIndex: Int
    }

    /// Loads, checks and compiles the model in the GPU environment.
    ///
    /// - Throws: ``GPUUnavailable`` (recorded for the process) when no GPU is usable; the errors
    ///   of ``prepare(_:source:environment:gpu:threads:verbose:)`` otherwise.
    private static func prepareForGPU(
        _ bytes: AlignedMemory, source: String, threads: Int, options: Options?, keepsQuantizedOnCPU: Bool = false,
        verbose: Bool
    ) throws -> Prepared {
        let environment: EnvironmentHandle
        do {
            environment = try EnvironmentHandle.sharedGPU()
        } catch let reason as GPUUnavailable {
            GPUVerdict.record(reason)
            throw reason
        }
        do {
            return try prepare(
                bytes, source: source, environment: environment, gpu: true,
                gpuPrecision: options?.gpuPrecision ?? .fp32, keepsQuantizedOnCPU: keepsQuantizedOnCPU,
                threads: threads, verbose: verbose)
        } catch let failure as CompileFailure {
            if let reason = GPUDiagnosis.unavailable(fromLog: failure.error.runtimeLog) {
                GPUVerdict.record(reason)
                throw reason
            }
            throw InterpreterError.failedToCreateInterpreter(reason: "\(source): \(failure.error)")
        }
    }

    /// Whether a signature takes or gives integer tensors (uint8, int8, int16): a quantized model.
    private static func isQuantized(_ signature: SignatureInfo) -> Bool {
        let integerTypes: Set<Int32> = [3, 7, 9]
        return (signature.inputs + signature.outputs).contains { integerTypes.contains($0.elementType) }
    }

    /// The runtime refused to compile a model it had loaded.
    private struct CompileFailure: Error {
        let error: LiteRTCallError
    }

    /// Loads, checks and compiles the model in `environment`.
    private static func prepare(
        _ bytes: AlignedMemory, source: String, environment: EnvironmentHandle, gpu: Bool,
        gpuPrecision: GPUPrecision = .fp32, keepsQuantizedOnCPU: Bool = false, threads: Int, verbose: Bool
    ) throws -> Prepared {
        let model: ModelHandle
        do {
            model = try ModelHandle(bytes: bytes, environment: environment, verbose: verbose)
            // After LiteRT's verifier (so its verdict comes first), before anything compiles.
            try ModelIntegrity.check(bytes)
        } catch let error as LiteRTCallError {
            throw InterpreterError.failedToLoadModel(reason: Self.loadFailure(error, source: source))
        } catch let error as ModelIntegrityError {
            throw InterpreterError.failedToLoadModel(reason: Self.integrityFailure(error, source: source))
        }
        let signatures: [SignatureInfo]
        do {
            signatures = try ModelSignatures.read(model)
        } catch let error as LiteRTCallError {
            throw InterpreterError.failedToLoadModel(reason: "\(source): \(error.function).")
        } catch let error as ModelIntegrityError {
            throw InterpreterError.failedToLoadModel(reason: Self.integrityFailure(error, source: source))
        }
        guard let mainInfo = signatures.first(where: \.isMain) else {
            throw InterpreterError.failedToLoadModel(
                reason: "\(source): the model has no signature or subgraph to run.")
        }
        if gpu, keepsQuantizedOnCPU, Self.isQuantized(mainInfo) {
            throw GPUUnavailable(
                "the model is quantized (integer inputs or outputs): the CPU runs its integer arithmetic exactly, "
                    + "the GPU only dequantized, with scores that can differ by tenths (--accelerator gpu runs it there "
                    + "anyway; a float model on the GPU stays within 0.0001 of the CPU)")
        }
        let compiled: CompiledModelHandle
        do {
            compiled = try CompiledModelHandle(
                model: model, threads: threads, gpu: gpu, gpuPrecision: gpuPrecision, verbose: verbose)
        } catch let error as LiteRTCallError {
            if gpu { throw CompileFailure(error: error) }
            throw InterpreterError.failedToCreateInterpreter(reason: "\(source): \(error)")
        }
        return Prepared(compiled: compiled, signatures: signatures, mainIndex: mainInfo.index)
    }

    static func checkDelegates(_ delegates: [any Delegate]?) throws {
        guard let delegates, let first = delegates.first else { return }
        if let metal = first as? MetalDelegate {
            throw InterpreterError.failedToCreateInterpreter(reason: metal.unavailableReason + ".")
        }
        throw InterpreterError.failedToCreateInterpreter(
            reason: "delegates are not supported: LiteRT runs this model on the CPU with XNNPACK.")
    }

    /// The reason for a model the runtime refused to load.
    private static func loadFailure(_ error: LiteRTCallError, source: String) -> String {
        let log = error.runtimeLog.isEmpty ? "" : " Runtime said: \(error.runtimeLog)"
        if error.status.isInvalidFlatbuffer {
            return "\(source): not a valid TensorFlow Lite flatbuffer (truncated or corrupt; "
                + "the runtime's verifier rejected it).\(log)"
        }
        return "\(source): \(error.function) failed with status \(error.statusName).\(log)"
    }

    /// The reason for a model the runtime's verifier accepted but its runtime would crash on.
    private static func integrityFailure(_ error: ModelIntegrityError, source: String) -> String {
        "\(source): not a valid TensorFlow Lite model: \(error.problem) (the file is corrupt)."
    }

    /// The model's metadata buffer stored under `name`, or `nil` when it has none.
    ///
    /// TFLite models written with the metadata writers keep their description (normalisation,
    /// labels file names, licence) in a FlatBuffer under `TFLITE_METADATA`; MediaPipe's models
    /// carry one too. This returns the raw bytes; NetRunner reads them.
    ///
    /// - Parameter name: The metadata entry's name.
    /// - Returns: A copy of the buffer.
    public func modelMetadata(named name: String = "TFLITE_METADATA") -> Data? {
        compiled.model.metadata(forKey: name)
    }

    /// Runs the model's main signature on the current input tensors.
    ///
    /// - Throws: ``InterpreterError/allocateTensorsRequired`` before
    ///   ``allocateTensors()``; ``InterpreterError/tensorFlowLiteError(_:)`` with the
    ///   runtime's status if the run fails.
    public func invoke() throws {
        try map { () throws(SignatureStateError) in try main.invoke() }
    }

    /// A copy of the input tensor at `index`, in the order of the model's inputs.
    ///
    /// - Parameter index: The input's index, from 0 to ``inputTensorCount`` - 1.
    /// - Returns: The tensor, with a copy of its bytes.
    /// - Throws: ``InterpreterError/invalidTensorIndex(index:maxIndex:)``,
    ///   ``InterpreterError/allocateTensorsRequired``.
    public func input(at index: Int) throws -> Tensor {
        let position = try signatureIndex(ofInput: index)
        return try map { () throws(SignatureStateError) in try main.inputTensor(position) }
    }

    /// A copy of the output tensor at `index`, in the order of the model's outputs.
    ///
    /// - Parameter index: The output's index, from 0 to ``outputTensorCount`` - 1.
    /// - Returns: The tensor, with a copy of its bytes.
    /// - Throws: ``InterpreterError/invalidTensorIndex(index:maxIndex:)``,
    ///   ``InterpreterError/invokeInterpreterRequired`` before ``allocateTensors()`` (as in
    ///   TensorFlowLiteSwift, an allocated output reads as zeros until the first ``invoke()``).
    public func output(at index: Int) throws -> Tensor {
        guard (0..<outputTensorCount).contains(index) else {
            throw InterpreterError.invalidTensorIndex(index: index, maxIndex: outputTensorCount - 1)
        }
        let position = main.info.classicOutputOrder[index]
        return try map { () throws(SignatureStateError) in try main.outputTensor(position) }
    }

    /// Changes the shape of the input tensor at `index`.
    ///
    /// Call ``allocateTensors()`` afterwards, before copying data or invoking.
    ///
    /// - Parameters:
    ///   - index: The input's index.
    ///   - shape: The new shape.
    /// - Throws: ``InterpreterError/invalidTensorIndex(index:maxIndex:)``,
    ///   ``InterpreterError/failedToResizeInputTensor(index:)``.
    public func resizeInput(at index: Int, to shape: Tensor.Shape) throws {
        let position = try signatureIndex(ofInput: index)
        do {
            try main.resizeInput(position, to: shape.dimensions)
        } catch {
            throw InterpreterError.failedToResizeInputTensor(index: index)
        }
    }

    /// Copies bytes into the input tensor at `index`.
    ///
    /// - Parameters:
    ///   - data: Exactly as many bytes as the tensor holds, in its element type.
    ///   - index: The input's index.
    /// - Returns: The input tensor, holding `data`.
    /// - Throws: ``InterpreterError/invalidTensorIndex(index:maxIndex:)``,
    ///   ``InterpreterError/invalidTensorDataCount(provided:required:)``,
    ///   ``InterpreterError/allocateTensorsRequired``.
    @discardableResult
    public func copy(_ data: Data, toInputAt index: Int) throws -> Tensor {
        let position = try signatureIndex(ofInput: index)
        return try map { () throws(SignatureStateError) in
            try main.copy(data, toInput: position)
            return try main.inputTensor(position, data: data)
        }
    }

    /// Allocates memory for the tensors of the main signature, for their current shapes.
    ///
    /// Call it once after creating the interpreter and again after a resize; calling it
    /// when nothing changed costs nothing.
    ///
    /// - Throws: ``InterpreterError/failedToAllocateTensors``, or
    ///   ``InterpreterError/invalidTensorDataType`` for a tensor type that cannot be held
    ///   in a buffer (strings, packed 4-bit types).
    public func allocateTensors() throws {
        try map { () throws(SignatureStateError) in try main.allocate() }
    }

    /// A runner for the signature with the given key.
    ///
    /// - Parameter key: One of ``signatureKeys``.
    /// - Returns: A runner that keeps this interpreter alive.
    /// - Throws: ``SignatureRunnerError/failedToCreateSignatureRunner(signatureKey:)``
    ///   when the model has no such signature.
    public func signatureRunner(with key: String) throws -> SignatureRunner {
        guard let state = states.first(where: { $0.info.key == key }) else {
            throw SignatureRunnerError.failedToCreateSignatureRunner(signatureKey: key)
        }
        return try SignatureRunner(interpreter: self, state: state)
    }

    private func signatureIndex(ofInput index: Int) throws -> Int {
        guard (0..<inputTensorCount).contains(index) else {
            throw InterpreterError.invalidTensorIndex(index: index, maxIndex: inputTensorCount - 1)
        }
        return main.info.classicInputOrder[index]
    }

    /// Runs `body`, turning signature-state failures into `InterpreterError`s.
    private func map<T>(_ body: () throws(SignatureStateError) -> T) throws(InterpreterError) -> T {
        do {
            return try body()
        } catch {
            switch error {
            case .allocateTensorsRequired: throw .allocateTensorsRequired
            case .invokeRequired: throw .invokeInterpreterRequired
            case .unsupportedType: throw .invalidTensorDataType
            case .dynamicShape: throw .failedToAllocateTensors
            case .dataCount(let provided, let required):
                throw .invalidTensorDataCount(provided: provided, required: required)
            case .resizeFailed: throw .failedToResizeInputTensor(index: -1)
            case .allocationFailed: throw .failedToAllocateTensors
            case .runFailed(let call): throw .tensorFlowLiteError(call.description)
            }
        }
    }
}

extension Interpreter {
    /// Options for creating an ``Interpreter``.
    public struct Options: Equatable, Hashable, Sendable {
        /// The number of CPU threads XNNPACK uses; `nil` (or a value below 1) uses one.
        public var threadCount: Int? = nil

        /// The hardware the model runs on; the CPU by default (see ``Accelerator``).
        public var accelerator: Accelerator = .cpu

        /// The arithmetic the GPU computes in; float32 by default (see ``GPUPrecision``).
        public var gpuPrecision: GPUPrecision = .fp32

        /// Accepted for source compatibility; XNNPACK always runs.
        ///
        /// LiteRT always runs CPU models with XNNPACK,
        /// as TensorFlowLiteSwift's prebuilt runtime does by default, so both values run
        /// the same kernels and give the same outputs.
        public var isXNNPackEnabled: Bool = false

        /// Whether the runtime's log lines go to the `TensorFlowLite` logger (swift-log).
        ///
        /// Off by default: the runtime's INFO lines are
        /// dropped and its warnings and errors are attached to the errors thrown.
        public var isErrorLoggingEnabled: Bool = false

        /// Creates options with the defaults: one thread, logging off.
        public init() {}
    }
}

/// The TensorFlowLiteSwift name of ``Interpreter/Options``.
@available(*, deprecated, renamed: "Interpreter.Options")
public typealias InterpreterOptions = Interpreter.Options
