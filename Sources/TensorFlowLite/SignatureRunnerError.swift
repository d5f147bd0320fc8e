public import FoundationEssentials

/// Errors thrown by a ``SignatureRunner``, with TensorFlowLiteSwift's cases.
public enum SignatureRunnerError: Error, Equatable, Hashable, Sendable {
    /// The data given for a tensor does not have the tensor's byte count.
    case invalidTensorDataCount(provided: Int, required: Int)
    /// The tensor's element type is not one ``Tensor/DataType`` can represent.
    case invalidTensorDataType
    /// The model has no signature with this key.
    case failedToCreateSignatureRunner(signatureKey: String)
    /// The signature has no input (or output) with this name.
    case failedToGetTensor(tensorType: String, nameInSignature: String)
    /// The input could not take the requested shape.
    case failedToResizeInputTensor(inputName: String)
    /// The bytes could not be copied into the input tensor.
    case failedToCopyDataToInputTensor
    /// The runtime could not allocate memory for the tensors.
    case failedToAllocateTensors
    /// The runtime failed while running the signature.
    case failedToInvokeSignature(signatureKey: String)
    /// ``SignatureRunner/allocateTensors()`` must be called first (again, after a resize).
    case allocateTensorsRequired
}

extension SignatureRunnerError: LocalizedError {
    /// A description of the error, naming what went wrong.
    public var errorDescription: String? {
        switch self {
        case .invalidTensorDataCount(let provided, let required):
            "Provided data count \(provided) must match the required count \(required)."
        case .invalidTensorDataType:
            "Tensor data type is unsupported or could not be determined due to a model error."
        case .failedToCreateSignatureRunner(let signatureKey):
            "Failed to create a signature runner: the model has no signature \"\(signatureKey)\"."
        case .failedToGetTensor(let tensorType, let nameInSignature):
            "Failed to get the \(tensorType) tensor \"\(nameInSignature)\": the signature has no such \(tensorType)."
        case .failedToResizeInputTensor(let inputName):
            "Failed to resize the input tensor \"\(inputName)\"."
        case .failedToCopyDataToInputTensor:
            "Failed to copy data to the input tensor."
        case .failedToAllocateTensors:
            "Failed to allocate memory for the signature's tensors."
        case .failedToInvokeSignature(let signatureKey):
            "Failed to invoke the signature \"\(signatureKey)\"."
        case .allocateTensorsRequired:
            "Must call allocateTensors()."
        }
    }
}

extension SignatureRunnerError: CustomStringConvertible {
    /// The same text as ``errorDescription``.
    public var description: String { errorDescription ?? "Unknown error." }
}
