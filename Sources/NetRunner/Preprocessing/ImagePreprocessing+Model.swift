public import TensorFlowLite

extension ImagePreprocessing {
    /// The preprocessing choices a caller makes or a task defaults to; each `nil` leaves the
    /// choice to the next in line (see ``ImagePreprocessing/init(input:inputIndex:model:requested:taskDefaults:)``).
    public struct Choices: Equatable, Hashable, Sendable {
        /// How images fit the input.
        public var cropping: Cropping?
        /// How 0-255 pixels map to the input's values.
        public var normalization: Normalization?
        /// The tensor's channel order.
        public var channelOrder: ChannelOrder?

        /// Creates choices; `nil` decides nothing.
        ///
        /// - Parameters:
        ///   - cropping: How images fit the input.
        ///   - normalization: How pixels are normalised.
        ///   - channelOrder: The channel order.
        public init(cropping: Cropping? = nil, normalization: Normalization? = nil, channelOrder: ChannelOrder? = nil) {
            self.cropping = cropping
            self.normalization = normalization
            self.channelOrder = channelOrder
        }
    }

    /// The preprocessing of a model's image input, each choice decided by one rule.
    ///
    /// The rule, shared by every task:
    ///
    /// 1. what the caller asked (`requested`: the task's options, the command's flags);
    /// 2. what the model's description says: `model.json`'s `format` (`"BGR"`), `crop` and `normalize`,
    ///    else the TFLite metadata's normalisation (for float inputs);
    /// 3. the task's default (`taskDefaults`; its normalisation applies to float inputs);
    /// 4. the tensor's default: RGB, `pixel / 255` for float inputs, the raw bytes for `uint8`
    ///    and the tensor's own quantization for `int8`.
    ///
    /// - Parameters:
    ///   - input: The model's input tensor (after `allocateTensors()`).
    ///   - inputIndex: Its index.
    ///   - model: The loaded model and its description.
    ///   - requested: The caller's choices.
    ///   - taskDefaults: The task's conventions (a detector letterboxes anchor models, say).
    /// - Throws: ``NetRunnerError/notAnImageModel(model:reason:)`` when the input is not an
    ///   image tensor or the description says it is not an image layer.
    public init(
        input: Tensor, inputIndex: Int = 0, model: LoadedModel, requested: Choices, taskDefaults: Choices
    ) throws(NetRunnerError) {
        let described = try Self.described(by: model, inputIndex: inputIndex, isFloat: input.dataType == .float32)
        let isFloat = input.dataType == .float32
        try self.init(
            input: input, inputIndex: inputIndex,
            cropping: requested.cropping ?? described.cropping ?? taskDefaults.cropping ?? .centerSquare,
            normalization: requested.normalization ?? described.normalization
                ?? (isFloat ? taskDefaults.normalization : nil),
            channelOrder: requested.channelOrder ?? described.channelOrder ?? taskDefaults.channelOrder ?? .rgb,
            model: model.name)
    }

    /// What the model's description (else its TFLite metadata) says of an image input.
    private static func described(
        by model: LoadedModel, inputIndex: Int, isFloat: Bool
    ) throws(NetRunnerError) -> Choices {
        var choices = Choices()
        if let description = model.description {
            guard description.inputs.indices.contains(inputIndex), description.inputs[inputIndex].kind == .image else {
                throw .notAnImageModel(
                    model: model.name, reason: "model.json's input \(inputIndex) is not an image layer")
            }
            let layer = description.inputs[inputIndex]
            switch layer.format?.uppercased() {
            case "BGR": choices.channelOrder = .bgr
            case "RGB": choices.channelOrder = .rgb
            default: break
            }
            choices.normalization = layer.normalize.map(Normalization.init)
            choices.cropping = layer.crop
        }
        if choices.normalization == nil, isFloat, let metadata = model.metadata,
            metadata.inputs.indices.contains(inputIndex), let normalization = metadata.inputs[inputIndex].normalization
        {
            choices.normalization = Normalization(mean: normalization.mean, std: normalization.std)
        }
        return choices
    }
}

extension ImagePreprocessing.Normalization {
    /// The normalisation a TensorIO `normalize` transform describes.
    ///
    /// TensorIO computes `pixel * scale + bias[c]`, which is `(pixel - mean[c]) / std` with
    /// `mean[c] = -bias[c] / scale` and `std = 1 / scale`; the standard strings are exact.
    ///
    /// - Parameter normalize: The transform.
    public init(_ normalize: ModelDescription.Transform) {
        switch normalize.standard {
        case "[0,1]": self = .zeroToOne
        case "[-1,1]": self = .minusOneToOne
        default: self.init(mean: normalize.bias.map { -$0 / normalize.scale }, std: [1 / normalize.scale])
        }
    }
}
