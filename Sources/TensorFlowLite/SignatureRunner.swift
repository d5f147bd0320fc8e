public import FoundationEssentials

/// Runs one signature of a model by input and output names.
///
///     let runner = try interpreter.signatureRunner(with: "serving_default")
///     try runner.invoke(with: ["image": imageData])
///     let scores = try runner.output(named: "scores")
///
/// Tensors are allocated when the runner is created, and again before an invocation that
/// follows a resize.
///
/// - Note: A runner keeps its ``Interpreter`` alive; do not keep runners in a property of
///   the interpreter's owner that the interpreter could reach back to. Runners of the same
///   signature share that signature's tensors, as in TensorFlow Lite. Not thread-safe.
public final class SignatureRunner {
    /// The key of the signature this runner runs.
    public let signatureKey: String

    /// The names of the signature's inputs, in the signature's order.
    public let inputs: [String]

    /// The names of the signature's outputs, in the signature's order.
    public let outputs: [String]

    private let interpreter: Interpreter
    private let state: SignatureState

    init(interpreter: Interpreter, state: SignatureState) throws {
        self.interpreter = interpreter
        self.state = state
        self.signatureKey = state.info.key
        self.inputs = state.info.inputNames
        self.outputs = state.info.outputNames
        try allocateTensors()
    }

    /// Copies the given inputs in and runs the signature.
    ///
    /// - Parameter inputs: Bytes for some or all inputs, by name; inputs not named keep
    ///   their current contents.
    /// - Throws: ``SignatureRunnerError/failedToGetTensor(tensorType:nameInSignature:)`` for
    ///   an unknown name, ``SignatureRunnerError/invalidTensorDataCount(provided:required:)``,
    ///   ``SignatureRunnerError/failedToInvokeSignature(signatureKey:)``.
    public func invoke(with inputs: [String: Data] = [:]) throws {
        try allocateTensors()
        for (name, data) in inputs {
            try copy(data, toInputNamed: name)
        }
        try map { () throws(SignatureStateError) in try state.invoke() }
    }

    /// A copy of the input tensor with the given name.
    ///
    /// - Parameter name: One of ``inputs``.
    /// - Returns: The tensor, with a copy of its bytes.
    /// - Throws: ``SignatureRunnerError/failedToGetTensor(tensorType:nameInSignature:)``.
    public func input(named name: String) throws -> Tensor {
        let index = try inputIndex(name)
        return try map { () throws(SignatureStateError) in try state.inputTensor(index) }
    }

    /// A copy of the output tensor with the given name.
    ///
    /// - Parameter name: One of ``outputs``.
    /// - Returns: The tensor, with a copy of its bytes.
    /// - Throws: ``SignatureRunnerError/failedToGetTensor(tensorType:nameInSignature:)``.
    ///   Outputs read as zeros until the first invocation.
    public func output(named name: String) throws -> Tensor {
        guard let index = outputs.firstIndex(of: name) else {
            throw SignatureRunnerError.failedToGetTensor(tensorType: "output", nameInSignature: name)
        }
        return try map { () throws(SignatureStateError) in try state.outputTensor(index) }
    }

    /// Changes the shape of the named input; tensors are allocated again before the next
    /// invocation.
    ///
    /// - Parameters:
    ///   - name: One of ``inputs``.
    ///   - shape: The new shape.
    /// - Throws: ``SignatureRunnerError/failedToResizeInputTensor(inputName:)``.
    public func resizeInput(named name: String, toShape shape: Tensor.Shape) throws {
        let index = try inputIndex(name)
        do {
            try state.resizeInput(index, to: shape.dimensions)
        } catch {
            throw SignatureRunnerError.failedToResizeInputTensor(inputName: name)
        }
    }

    /// Copies bytes into the named input tensor.
    ///
    /// - Parameters:
    ///   - data: Exactly as many bytes as the tensor holds.
    ///   - name: One of ``inputs``.
    /// - Throws: ``SignatureRunnerError/invalidTensorDataCount(provided:required:)``,
    ///   ``SignatureRunnerError/allocateTensorsRequired`` after a resize.
    public func copy(_ data: Data, toInputNamed name: String) throws {
        let index = try inputIndex(name)
        try map { () throws(SignatureStateError) in try state.copy(data, toInput: index) }
    }

    /// Allocates the signature's tensors for their current shapes; does nothing when they
    /// are already allocated.
    ///
    /// - Throws: ``SignatureRunnerError/failedToAllocateTensors``.
    public func allocateTensors() throws {
        try map { () throws(SignatureStateError) in try state.allocate() }
    }

    private func inputIndex(_ name: String) throws -> Int {
        guard let index = inputs.firstIndex(of: name) else {
            throw SignatureRunnerError.failedToGetTensor(tensorType: "input", nameInSignature: name)
        }
        return index
    }

    private func map<T>(_ body: () throws(SignatureStateError) -> T) throws(SignatureRunnerError) -> T {
        do {
            return try body()
        } catch {
            switch error {
            case .allocateTensorsRequired: throw .allocateTensorsRequired
            case .invokeRequired, .runFailed: throw .failedToInvokeSignature(signatureKey: signatureKey)
            case .unsupportedType: throw .invalidTensorDataType
            case .dynamicShape, .allocationFailed: throw .failedToAllocateTensors
            case .dataCount(let provided, let required):
                throw .invalidTensorDataCount(provided: provided, required: required)
            case .resizeFailed: throw .failedToResizeInputTensor(inputName: "")
            }
        }
    }
}
