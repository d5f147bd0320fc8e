package import NetRunner
package import NetRunnerImage
package import TensorFlowLite

/// What a served model takes and gives, as its first interpreter reports it.
package struct ModelDetails: Sendable {
    /// The input tensors, in the interpreter's order (shapes after allocation).
    package let inputs: [Tensor]
    /// The output tensors, in the interpreter's order.
    package let outputs: [Tensor]
    /// How an image becomes the input.
    package let preprocessing: ImagePreprocessing
    /// The labels of its classes, if known.
    package let labels: LabelMap?
    /// What it runs on (``Accelerator/auto`` resolved), and whether every operator runs there.
    package var accelerator: Accelerator = .cpu
    /// Whether every operator runs on ``accelerator``.
    package var isFullyAccelerated = true
    /// How its task decodes a photo (the same for every request's answer options): what a photo
    /// decoded in a decoder process ahead of the workers is decoded with.
    package var decodingOptions = DecodingOptions()
}
