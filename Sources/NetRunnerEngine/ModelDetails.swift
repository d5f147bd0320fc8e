public import NetRunner
public import TensorFlowLite

/// What a served model takes and gives, as its first interpreter reports it.
public struct ModelDetails: Sendable {
    /// The input tensors, in the interpreter's order (shapes after allocation).
    public let inputs: [Tensor]
    /// The output tensors, in the interpreter's order.
    public let outputs: [Tensor]
    /// How an image becomes the input.
    public let preprocessing: ImagePreprocessing
    /// The labels of its classes, if known.
    public let labels: LabelMap?
    /// What it runs on (``Accelerator/auto`` resolved), and whether every operator runs there.
    public var accelerator: Accelerator = .cpu
    /// Whether every operator runs on ``accelerator``.
    public var isFullyAccelerated = true
}
