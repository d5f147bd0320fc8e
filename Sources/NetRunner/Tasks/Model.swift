import FoundationEssentials
public import NetRunnerImage
public import TensorFlowLite

/// A model run as TensorIO runs it: inputs by layer name, outputs as a dictionary by layer
/// name, everything taken from the model's description (`model.json`).
///
///     let model = try Model(bundle: try ModelBundle(path: "mobilenet.tiobundle"))
///     let outputs = try model.run(["image": .image(pixels)])
///     if case .labelled(let scores) = outputs["classification"] { ... }
///
/// Image inputs are centre-cropped to a square, resized, reordered to the layer's `format`
/// and normalised by its `normalize` (or fed raw to quantized models); array inputs are
/// quantized by their `quantize`. Outputs are dequantized by their `dequantize` (or the
/// tensor's own quantization), turned into `label: score` dictionaries when the layer names a
/// labels file, and into a scalar when they hold one value, as TensorIO packs them.
///
/// - Note: Not thread-safe (it owns an ``Interpreter``).
public final class Model {
    /// One input value.
    public enum Input: Sendable {
        /// An image for an `image` layer.
        case image(PixelBuffer)
        /// Numbers for an `array` layer, in row-major order (exact for every 32-bit integer
        /// and for 64-bit integers up to 2^53).
        case array([Double])
        /// One number for a `scalar` layer.
        case scalar(Double)
    }

    /// One output value, as TensorIO packs it.
    ///
    /// In JSON it is a number, an array of numbers, or an object of `label: score`.
    public enum Output: Equatable, Hashable, Sendable, Codable {
        /// The values of an array layer.
        case array([Double])
        /// The values of a labelled layer, by label.
        case labelled([String: Double])
        /// A single value.
        case scalar(Double)

        /// Encodes the value as a number, an array or an object.
        ///
        /// - Parameter encoder: The encoder.
        /// - Throws: The encoder's errors.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .array(let values): try container.encode(values)
            case .labelled(let scores): try container.encode(scores)
            case .scalar(let value): try container.encode(value)
            }
        }

        /// Decodes a number, an array or an object.
        ///
        /// - Parameter decoder: The decoder.
        /// - Throws: `DecodingError` for anything else.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let value = try? container.decode(Double.self) {
                self = .scalar(value)
            } else if let values = try? container.decode([Double].self) {
                self = .array(values)
            } else {
                self = .labelled(try container.decode([String: Double].self))
            }
        }
    }

    /// The description the model runs by.
    public let description: ModelDescription

    private let interpreter: Interpreter

    /// What the model runs on (``Accelerator/auto`` resolved).
    public var accelerator: Accelerator { interpreter.accelerator }
    /// Why a model that asked for ``Accelerator/auto`` runs on the CPU, or `nil`.
    public var acceleratorFallbackReason: String? { interpreter.acceleratorFallbackReason }
    private let tensorizers: [Int: ImageTensorizer]
    private let labels: [Int: LabelMap]
    private let name: String

    /// Loads the bundle's model and prepares each layer.
    ///
    /// - Parameters:
    ///   - bundle: The bundle.
    ///   - threadCount: CPU threads for inference.
    /// - Throws: The errors of ``init(model:threadCount:)``.
    public convenience init(bundle: ModelBundle, threadCount: Int = 1) throws {
        try self.init(model: try LoadedModel(bundle: bundle), threadCount: threadCount)
    }

    /// Prepares a described model: each image layer's preprocessing (centre square, the
    /// layer's `format` and `normalize`, under ``ImagePreprocessing``'s one rule) and each
    /// output layer's labels.
    ///
    /// - Parameters:
    ///   - model: The model; it must have a description (`model.json`).
    ///   - threadCount: CPU threads for inference.
    ///   - isErrorLoggingEnabled: Whether the runtime's log lines go to the `TensorFlowLite` logger.
    ///   - accelerator: The hardware the model runs on (the CPU by default).
    /// - Throws: ``ModelBundleError`` when there is no description or it does not fit the
    ///   model, ``InterpreterError`` for a bad model file, ``NetRunnerError`` for labels that
    ///   do not fit.
    public init(
        model: LoadedModel, threadCount: Int = 1, isErrorLoggingEnabled: Bool = false, accelerator: Accelerator = .cpu
    ) throws {
        guard let description = model.description else {
            throw ModelBundleError.notABundle(
                path: model.name, reason: "it has no model.json describing its inputs and outputs")
        }
        var options = Interpreter.Options()
        options.threadCount = threadCount
        options.isErrorLoggingEnabled = isErrorLoggingEnabled
        options.accelerator = accelerator
        let interpreter = try model.makeInterpreter(options: options)
        var tensorizers: [Int: ImageTensorizer] = [:]
        for (index, layer) in description.inputs.enumerated() where layer.kind == .image {
            tensorizers[index] = try ImageTensorizer(
                preprocessing: try ImagePreprocessing(
                    input: try interpreter.input(at: index), inputIndex: index, model: model, requested: .init(),
                    taskDefaults: .init(cropping: .centerSquare)))
        }
        var labels: [Int: LabelMap] = [:]
        for (index, layer) in description.outputs.enumerated() where layer.labels != nil {
            let count = try interpreter.output(at: index).shape.elementCount
            labels[index] = try model.labels(forOutput: index, classCount: count)
        }
        self.interpreter = interpreter
        self.description = description
        self.tensorizers = tensorizers
        self.labels = labels
        self.name = model.name
    }

    /// Runs the model.
    ///
    /// - Parameter inputs: A value for every input layer, by layer name.
    /// - Returns: Every output layer's value, by layer name.
    /// - Throws: ``NetRunnerError/invalidOption(name:reason:)`` for a missing or mistyped
    ///   input, ``ImageError`` for an unusable image, ``InterpreterError`` from the runtime.
    public func run(_ inputs: [String: Input]) throws -> [String: Output] {
        for (index, layer) in description.inputs.enumerated() {
            guard let value = inputs[layer.name] else {
                throw NetRunnerError.invalidOption(
                    name: "inputs", reason: "no value for the input layer \"\(layer.name)\"")
            }
            try copy(value, to: index, layer: layer)
        }
        try interpreter.invoke()
        var outputs: [String: Output] = [:]
        for (index, layer) in description.outputs.enumerated() {
            outputs[layer.name] = try output(index, layer: layer)
        }
        return outputs
    }

    /// Runs a model whose only input is an image.
    ///
    /// - Parameter image: The image.
    /// - Returns: Every output layer's value, by layer name.
    /// - Throws: As ``run(_:)``.
    public func run(image: PixelBuffer) throws -> [String: Output] {
        guard description.inputs.count == 1, let layer = description.inputs.first, layer.kind == .image else {
            throw NetRunnerError.notAnImageModel(
                model: name, reason: "its description does not have exactly one image input")
        }
        return try run([layer.name: .image(image)])
    }

    private func copy(_ value: Input, to index: Int, layer: ModelDescription.Layer) throws {
        switch (value, layer.kind) {
        case (.image(let pixels), .image):
            guard let tensorizer = tensorizers[index] else {
                throw NetRunnerError.notAnImageModel(model: name, reason: "input \(index)")
            }
            try tensorizer.prepare(pixels)
            try interpreter.copy(tensorizer.input, toInputAt: index)
        case (.array(let values), .array), (.array(let values), .scalar):
            try interpreter.copy(try encode(values, index: index, layer: layer), toInputAt: index)
        case (.scalar(let value), .scalar), (.scalar(let value), .array):
            try interpreter.copy(try encode([value], index: index, layer: layer), toInputAt: index)
        default:
            throw NetRunnerError.invalidOption(
                name: "inputs", reason: "the input layer \"\(layer.name)\" is of type \(layer.kind.rawValue)")
        }
    }

    /// Whole numbers as a tensor of `T`, refusing values that do not fit.
    private static func integers<T: FixedWidthInteger>(
        _ values: [Double], as type: T.Type, layer: ModelDescription.Layer
    ) throws -> Data {
        let integers = values.compactMap { T(exactly: $0.rounded()) }
        guard integers.count == values.count else {
            throw NetRunnerError.invalidOption(
                name: "inputs", reason: "the input \"\(layer.name)\" takes \(T.bitWidth)-bit integers")
        }
        return integers.withUnsafeBufferPointer { Data(buffer: $0) }
    }

    /// Numbers in the tensor's element type, quantized as the layer says.
    private func encode(_ values: [Double], index: Int, layer: ModelDescription.Layer) throws -> Data {
        let tensor = try interpreter.input(at: index)
        let count = tensor.shape.elementCount
        guard values.count == count else {
            throw NetRunnerError.invalidOption(
                name: "inputs", reason: "the input layer \"\(layer.name)\" takes \(count) values, found \(values.count)"
            )
        }
        var data = Data()
        switch tensor.dataType {
        case .float32:
            data = values.map { Float($0) }.withUnsafeBufferPointer { Data(buffer: $0) }
        case .uInt8:
            let bytes = values.map { value -> UInt8 in
                // TensorIO quantize: (value + bias) * scale.
                let q = layer.quantize.map { (value + Double($0.bias[0])) * Double($0.scale) } ?? value
                return q.isNaN ? 0 : UInt8(min(max(q.rounded(), 0), 255))
            }
            data = Data(bytes)
        case .int32:
            data = try Self.integers(values, as: Int32.self, layer: layer)
        case .int64:
            data = try Self.integers(values, as: Int64.self, layer: layer)
        default:
            throw NetRunnerError.invalidOption(
                name: "inputs", reason: "the input \"\(layer.name)\" is \(tensor.dataType)")
        }
        return data
    }

    private func output(_ index: Int, layer: ModelDescription.Layer) throws -> Output {
        let tensor = try interpreter.output(at: index)
        let values: [Double]
        switch tensor.dataType {
        case .int32:
            values = tensor.data.withUnsafeBytes { $0.bindMemory(to: Int32.self).map { Double($0) } }
        case .int64:
            values = tensor.data.withUnsafeBytes { $0.bindMemory(to: Int64.self).map { Double($0) } }
        case .uInt8 where tensor.quantizationParameters == nil && layer.dequantize != nil:
            // TensorIO's dequantize: value * scale + bias.
            let dequantize = layer.dequantize ?? .zeroToOne
            values = tensor.data.map { Double(Float($0) * dequantize.scale + dequantize.bias[0]) }
        case .float32, .uInt8, .int8:
            values = try tensor.dequantizedValues().map { Double($0) }
        default:
            throw NetRunnerError.unsupportedOutputs(
                model: name, reason: "output \"\(layer.name)\" is \(tensor.dataType)")
        }
        if let labels = labels[index] {
            var scores: [String: Double] = [:]
            for (position, value) in values.enumerated() {
                scores[labels.labels[position], default: value] = max(scores[labels.labels[position]] ?? value, value)
            }
            return .labelled(scores)
        }
        return values.count == 1 ? .scalar(values[0]) : .array(values)
    }
}
