import FoundationEssentials
import NetRunnerFlatBuffers

/// Cuts a classifier at its penultimate layer: the same `.tflite` with the input of its last
/// fully connected layer (or 1 x 1 convolution, as MobileNet V2's quantized models end) as its
/// only output, so it runs as an embedder (MobileNet V2: 1280 pooled values).
///
/// From the model's output, the writer walks back through the layers that only reshape or
/// scale the logits (`SOFTMAX`, `RESHAPE`, `SQUEEZE`, `DEQUANTIZE`, `QUANTIZE`, `LOGISTIC`) to
/// the layer that makes them; its first input is the embedding. The operators after the one
/// that makes that tensor are left out (TFLite runs operators in their list's order), and every
/// table of the model is kept byte for byte: the new root and subgraph are written in front of
/// the model's bytes and point into them (``FlatBufferBuilder/init(tail:)``). The TFLite
/// metadata, which describes the classifier's output, and the signatures, which name it, are
/// not kept.
package enum PenultimateLayer {
    /// Why a model cannot be cut.
    package struct Failure: Error, CustomStringConvertible {
        /// What is wrong.
        package var description: String
    }

    /// TFLite builtins that only reshape or scale the logits.
    private static let passthrough: [Int32: String] = [
        6: "DEQUANTIZE", 14: "LOGISTIC", 22: "RESHAPE", 25: "SOFTMAX", 43: "SQUEEZE", 114: "QUANTIZE",
    ]
    /// The builtins that make logits from an embedding.
    private static let classifierLayers: [Int32: String] = [3: "CONV_2D", 9: "FULLY_CONNECTED"]

    /// The cut model.
    package struct Cut: Sendable {
        /// The new `.tflite` bytes.
        package var model: [UInt8]
        /// The embedding tensor's name in the model.
        package var tensorName: String
        /// The embedding's length.
        package var dimension: Int
    }

    /// The model cut at its penultimate layer.
    ///
    /// - Parameter model: A classifier's `.tflite` bytes (first subgraph, one output).
    /// - Returns: The cut model.
    /// - Throws: ``Failure`` naming what the model's last layers are when they are not a
    ///   classifier's head.
    package static func cut(_ model: [UInt8]) throws -> Cut {
        try model.withUnsafeBytes { raw -> Cut in
            guard let base = raw.baseAddress else { throw Failure(description: "an empty model") }
            let buffer = FlatBuffer(base: base, count: raw.count)
            guard let root = buffer.root, case .value(let subgraphs) = root.tables(2), let main = subgraphs.first,
                case .value(let tensors) = main.tables(0), case .value(let operators) = main.tables(3),
                case .value(let codes) = root.tables(1)
            else { throw Failure(description: "not a TFLite model with a subgraph") }
            if case .value(let buffers) = root.tables(4), buffers.contains(where: { ($0.u32(1) ?? 0) > 1 }) {
                throw Failure(description: "its weights are stored outside the FlatBuffer (a model over 2 GB)")
            }
            guard case .value(1) = main.vectorCount(2, elementSize: 4), var tensor = main.int32Element(2, 0) else {
                throw Failure(description: "the model must have exactly one output")
            }
            func producer(of tensor: Int32) -> Int? {
                operators.lastIndex { op in
                    let count = op.vectorCount(2, elementSize: 4).count ?? 0
                    return (0..<count).contains { op.int32Element(2, $0) == tensor }
                }
            }
            func builtin(_ op: FlatBuffer.Table) -> Int32 {
                guard let index = op.u32(0), Int(index) < codes.count else { return -1 }
                let code = codes[Int(index)]
                let deprecated = Int32(Int8(bitPattern: code.u8(0) ?? 0))
                return max(deprecated, Int32(bitPattern: code.u32(3) ?? 0))
            }
            var last: Int?
            for _ in 0..<8 {
                guard let index = producer(of: tensor) else {
                    throw Failure(description: "nothing in the model makes its output")
                }
                let code = builtin(operators[index])
                guard let input = operators[index].int32Element(1, 0) else {
                    throw Failure(description: "its last layers have no input")
                }
                if classifierLayers[code] != nil {
                    tensor = input
                    last = producer(of: input)
                    break
                }
                guard passthrough[code] != nil else {
                    throw Failure(
                        description: "it does not end in a fully connected layer or 1 x 1 convolution "
                            + "(its last layers include builtin operator \(code))")
                }
                tensor = input
            }
            guard let last, tensor >= 0, Int(tensor) < tensors.count else {
                throw Failure(description: "it does not end in a fully connected layer or 1 x 1 convolution")
            }
            let target = tensors[Int(tensor)]
            let shape = (0..<(target.vectorCount(0, elementSize: 4).count ?? 0)).compactMap {
                target.int32Element(0, $0)
            }
            guard let dimension = shape.last, dimension >= 2, shape.dropLast().allSatisfy({ $0 == 1 }) else {
                throw Failure(description: "its penultimate layer is \(shape), not one vector")
            }

            var builder = FlatBufferBuilder(tail: Array(raw))
            func reference(_ table: FlatBuffer.Table) -> FlatBufferBuilder.Offset {
                builder.reference(toTailPosition: table.position)
            }
            let subgraph = builder.subgraph(
                over: main, tensors: tensors.map(reference), operators: operators.prefix(last + 1).map(reference),
                outputs: [tensor])
            let name = target.string(3).value ?? "tensor \(tensor)"
            let description = builder.string("NetRunner: cut at its penultimate layer, \(name) (\(dimension) values)")
            let subgraphList = builder.vector(offsets: [subgraph] + subgraphs.dropFirst().map(reference))
            builder.startTable()
            builder.add(root.u32(0) ?? 3, field: 0)
            if let codes = root.referencePosition(1) {
                builder.add(offset: builder.reference(toTailPosition: codes), field: 1)
            }
            builder.add(offset: subgraphList, field: 2)
            builder.add(offset: description, field: 3)
            if let buffers = root.referencePosition(4) {
                builder.add(offset: builder.reference(toTailPosition: buffers), field: 4)
            }
            let newRoot = builder.endTable()
            return Cut(
                model: builder.finished(root: newRoot, identifier: "TFL3"), tensorName: name,
                dimension: Int(dimension))
        }
    }
}

extension LoadedModel {
    /// This classifier cut at its penultimate layer, to run as an embedder
    /// (``ImageEmbedder``): MobileNet V2's 1280 pooled values in place of its 1001 scores.
    ///
    ///     let embedder = try ImageEmbedder(model: try LoadedModel(.path("mobilenet_v2.tflite")).penultimateLayer())
    ///
    /// The input and how images are prepared for it are the classifier's (its `model.json`,
    /// with one output); its type is `image.embedding`, so ``ImageTask`` runs it as an
    /// embedder whatever its output's shape. See ``PenultimateLayer``.
    ///
    /// - Returns: The embedder's model, named `NAME#penultimate`.
    /// - Throws: ``NetRunnerError/unsupportedOutputs(model:reason:)`` when the model does not
    ///   end in a classifier's head.
    public func penultimateLayer() throws -> LoadedModel {
        let cut: PenultimateLayer.Cut
        do {
            cut = try PenultimateLayer.cut([UInt8](modelData))
        } catch let failure as PenultimateLayer.Failure {
            throw NetRunnerError.unsupportedOutputs(
                model: name, reason: "it cannot be cut at a penultimate layer: \(failure.description)")
        }
        var described = description
        if var copy = described {
            copy.model.type = "image.embedding"
            copy.outputs = [
                ModelDescription.Layer(
                    name: cut.tensorName, kind: .array, shape: [1, cut.dimension], dtype: nil, format: nil, crop: nil,
                    normalize: nil, denormalize: nil, quantize: nil, dequantize: nil, labels: nil)
            ]
            described = copy
        }
        var model = try LoadedModel(
            .bundleData(name: name + "#penultimate", modelData: Data(cut.model), description: described, assets: [:]))
        model.trust = trust
        model.assignedType = "image.embedding"
        return model
    }
}
