public import FoundationEssentials

/// Errors thrown by the ``Interpreter``.
///
/// The cases and messages are TensorFlowLiteSwift's. Two cases carry a reason here
/// that they do not carry there, because LiteRT tells us why: ``failedToLoadModel(reason:)``
/// and ``failedToCreateInterpreter(reason:)``. `catch InterpreterError.failedToLoadModel`
/// still matches them.
public enum InterpreterError: Error, Equatable, Hashable, Sendable {
    /// The tensor index is out of range.
    case invalidTensorIndex(index: Int, maxIndex: Int)
    /// The data given for a tensor does not have the tensor's byte count.
    case invalidTensorDataCount(provided: Int, required: Int)
    /// The tensor's element type is not one ``Tensor/DataType`` can represent.
    case invalidTensorDataType
    /// The model could not be read or is not a valid TensorFlow Lite model.
    case failedToLoadModel(reason: String)
    /// The model is valid but the runtime could not prepare it (for example an
    /// unsupported operator).
    case failedToCreateInterpreter(reason: String)
    /// The input tensor could not take the requested shape.
    case failedToResizeInputTensor(index: Int)
    /// The bytes could not be copied into the input tensor.
    case failedToCopyDataToInputTensor
    /// The runtime could not allocate memory for the tensors.
    case failedToAllocateTensors
    /// ``Interpreter/allocateTensors()`` must be called first (again, after a resize).
    case allocateTensorsRequired
    /// ``Interpreter/invoke()`` must be called before outputs are read.
    case invokeInterpreterRequired
    /// An error reported by the runtime, with its message.
    case tensorFlowLiteError(String)
}

extension InterpreterError: LocalizedError {
    /// A description of the error, naming what went wrong and what to do.
    public var errorDescription: String? {
        switch self {
        case .invalidTensorIndex(let index, let maxIndex):
            "Invalid tensor index \(index), max index is \(maxIndex)."
        case .invalidTensorDataCount(let provided, let required):
            "Provided data count \(provided) must match the required count \(required)."
        case .invalidTensorDataType:
            "Tensor data type is unsupported or could not be determined due to a model error."
        case .failedToLoadModel(let reason):
            "Failed to load the given model: \(reason)"
        case .failedToCreateInterpreter(let reason):
            "Failed to create the interpreter: \(reason)"
        case .failedToResizeInputTensor(let index):
            "Failed to resize input tensor at index \(index)."
        case .failedToCopyDataToInputTensor:
            "Failed to copy data to input tensor."
        case .failedToAllocateTensors:
            "Failed to allocate memory for input tensors."
        case .allocateTensorsRequired:
            "Must call allocateTensors()."
        case .invokeInterpreterRequired:
            "Must call invoke()."
        case .tensorFlowLiteError(let message):
            "TensorFlow Lite Error: \(message)"
        }
    }
}

extension InterpreterError: CustomStringConvertible {
    /// The same text as ``errorDescription``.
    public var description: String { errorDescription ?? "Unknown error." }
}
