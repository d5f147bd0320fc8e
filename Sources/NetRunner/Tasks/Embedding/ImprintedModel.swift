import FoundationEssentials
import NetRunnerFlatBuffers

/// Writes a classifier made by weight imprinting (Qi, Brown and Lowe, "Low-Shot Learning with
/// Imprinted Weights", 2018, as Coral's imprinting engine does): an embedding extractor's
/// `.tflite` with a last layer appended whose weights are each class's normalised mean
/// embedding.
///
/// The appended layers are TFLite builtins every runtime has: `DEQUANTIZE` (for a quantized
/// extractor), `RESHAPE` to `[1, N]`, `L2_NORMALIZATION`, `FULLY_CONNECTED` with the classes'
/// weights times ``scale`` and a zero bias (so the logits are the cosines times the scale), and
/// `SOFTMAX`. The extractor's own tables are kept byte for byte: the new model's root, subgraph
/// and lists are written in front of the extractor's bytes and point into them
/// (``FlatBufferBuilder/init(tail:)``), so what the writer does not know is carried unchanged.
package enum ImprintedModel {
    /// The TFLite builtin operators appended.
    private enum Builtin: Int32 {
        case dequantize = 6
        case fullyConnected = 9
        case l2Normalization = 11
        case reshape = 22
        case softmax = 25
    }

    /// The `BuiltinOptions` union's members used.
    private enum Options: UInt8 {
        case none = 0
        case fullyConnected = 8
        case softmax = 9
        case l2Norm = 12
        case reshape = 17
    }

    /// Why a model cannot be extended.
    package struct Failure: Error, CustomStringConvertible {
        /// What is wrong.
        package var description: String
    }

    /// The classifier's `.tflite` bytes.
    ///
    /// - Parameters:
    ///   - extractor: The embedding extractor's `.tflite` bytes (first subgraph, one output of
    ///     `dimension` values, float32 or 8-bit).
    ///   - weights: One row of `dimension` values per class, each of unit length.
    ///   - scale: What the cosines are multiplied by before the softmax.
    ///   - metadata: TFLite metadata for the classifier (``TFLiteMetadataWriter``), stored as
    ///     its `TFLITE_METADATA` in place of the extractor's, if any; the other entries kept.
    ///   - packedFiles: The files the metadata names, appended as a stored zip.
    /// - Returns: The new model.
    /// - Throws: ``Failure`` for an extractor this cannot extend.
    package static func make(
        extractor: [UInt8], weights: [[Float]], scale: Float, metadata: [UInt8]? = nil,
        packedFiles: [(name: String, data: [UInt8])] = []
    ) throws -> [UInt8] {
        let classes = weights.count
        guard classes >= 1, let dimension = weights.first?.count, dimension >= 1,
            weights.allSatisfy({ $0.count == dimension })
        else { throw Failure(description: "no classes, or rows of different lengths") }
        return try extractor.withUnsafeBytes { raw -> [UInt8] in
            guard let base = raw.baseAddress else { throw Failure(description: "an empty model") }
            let model = FlatBuffer(base: base, count: raw.count)
            guard let root = model.root, case .value(let subgraphs) = root.tables(2), let main = subgraphs.first,
                case .value(let tensors) = main.tables(0), case .value(let operators) = main.tables(3),
                case .value(let codes) = root.tables(1), case .value(let buffers) = root.tables(4)
            else { throw Failure(description: "not a TFLite model with a subgraph") }
            guard case .value(1) = main.vectorCount(2, elementSize: 4), let outputIndex = main.int32Element(2, 0),
                outputIndex >= 0, Int(outputIndex) < tensors.count
            else { throw Failure(description: "the extractor must have exactly one output") }
            for buffer in buffers where (buffer.u32(1) ?? 0) > 1 {
                throw Failure(description: "its weights are stored outside the FlatBuffer (a model over 2 GB)")
            }
            let output = tensors[Int(outputIndex)]
            let type = output.u8(1) ?? 255
            guard type == 0 || type == 3 || type == 9 else {
                throw Failure(description: "its output is not float32, uint8 or int8 (TFLite type \(type))")
            }
            guard case .value(let count) = output.vectorCount(0, elementSize: 4), count >= 1,
                let last = output.int32Element(0, count - 1), Int(last) == dimension
            else { throw Failure(description: "its output does not end in \(dimension) values") }
            let outputShape = (0..<count).compactMap { output.int32Element(0, $0) }

            var builder = FlatBufferBuilder(tail: Array(raw))
            func reference(_ table: FlatBuffer.Table) -> FlatBufferBuilder.Offset {
                builder.reference(toTailPosition: table.position)
            }
            let oldTensors = tensors.map(reference)
            let oldOperators = operators.map(reference)
            let oldCodes = codes.map(reference)
            let oldBuffers = buffers.map(reference)

            // Buffers: the weights (scaled), the bias, the reshape's shape.
            let scaled = weights.flatMap { $0.map { $0 * scale } }
            let weightsBuffer = buffer(&builder, bytes: bytes(of: scaled))
            let biasBuffer = buffer(&builder, bytes: bytes(of: [Float](repeating: 0, count: classes)))
            let shapeBuffer = buffer(&builder, bytes: bytes(of: [Int32(1), Int32(dimension)]))
            let firstBuffer = Int32(buffers.count)

            // Tensors, after the extractor's.
            var newTensors: [FlatBufferBuilder.Offset] = []
            var nextTensor = Int32(tensors.count)
            func tensor(_ name: String, _ shape: [Int32], type: UInt8 = 0, buffer: Int32 = 0) -> Int32 {
                let nameOffset = builder.string(name)
                let shapeOffset = builder.vector(shape)
                builder.startTable()
                builder.add(offset: shapeOffset, field: 0)
                builder.add(type, field: 1)
                builder.add(UInt32(buffer), field: 2)
                builder.add(offset: nameOffset, field: 3)
                newTensors.append(builder.endTable())
                defer { nextTensor += 1 }
                return nextTensor
            }
            var embedding = outputIndex
            var steps: [(Builtin, [Int32], [Int32], Options, FlatBufferBuilder.Offset?)] = []
            if type != 0 {
                let dequantized = tensor("imprinting/dequantized", outputShape)
                steps.append((.dequantize, [embedding], [dequantized], .none, nil))
                embedding = dequantized
            }
            let shape = tensor("imprinting/shape", [2], type: 2, buffer: firstBuffer + 2)
            let flat = tensor("imprinting/embedding", [1, Int32(dimension)])
            let normalized = tensor("imprinting/normalized", [1, Int32(dimension)])
            let weightsTensor = tensor("imprinting/weights", [Int32(classes), Int32(dimension)], buffer: firstBuffer)
            let bias = tensor("imprinting/bias", [Int32(classes)], buffer: firstBuffer + 1)
            let logits = tensor("imprinting/logits", [1, Int32(classes)])
            let probabilities = tensor("scores", [1, Int32(classes)])

            let newShape = builder.vector([Int32(1), Int32(dimension)])
            builder.startTable()
            builder.add(offset: newShape, field: 0)
            let reshapeOptions = builder.endTable()
            builder.startTable()
            builder.add(Int8(0), field: 0)
            let l2Options = builder.endTable()
            builder.startTable()
            builder.add(Int8(0), field: 0)
            let fullyConnectedOptions = builder.endTable()
            builder.startTable()
            builder.add(Float(1), field: 0)
            let softmaxOptions = builder.endTable()
            steps += [
                (.reshape, [embedding, shape], [flat], .reshape, reshapeOptions),
                (.l2Normalization, [flat], [normalized], .l2Norm, l2Options),
                (.fullyConnected, [normalized, weightsTensor, bias], [logits], .fullyConnected, fullyConnectedOptions),
                (.softmax, [logits], [probabilities], .softmax, softmaxOptions),
            ]

            // Operator codes, after the extractor's; each operator names its code's index.
            var newCodes: [FlatBufferBuilder.Offset] = []
            var codeIndex: [Builtin: UInt32] = [:]
            for (builtin, _, _, _, _) in steps where codeIndex[builtin] == nil {
                builder.startTable()
                builder.add(Int8(builtin.rawValue), field: 0)
                builder.add(Int32(1), field: 2)
                builder.add(builtin.rawValue, field: 3)
                newCodes.append(builder.endTable())
                codeIndex[builtin] = UInt32(codes.count + newCodes.count - 1)
            }
            var newOperators: [FlatBufferBuilder.Offset] = []
            for (builtin, inputs, outputs, kind, options) in steps {
                let inputsOffset = builder.vector(inputs)
                let outputsOffset = builder.vector(outputs)
                builder.startTable()
                builder.add(codeIndex[builtin] ?? 0, field: 0)
                builder.add(offset: inputsOffset, field: 1)
                builder.add(offset: outputsOffset, field: 2)
                if let options {
                    builder.add(kind.rawValue, field: 3)
                    builder.add(offset: options, field: 4)
                }
                newOperators.append(builder.endTable())
            }

            // The subgraph: the extractor's, its output now the probabilities.
            let subgraph = builder.subgraph(
                over: main, tensors: oldTensors + newTensors, operators: oldOperators + newOperators,
                outputs: [probabilities])

            let description = builder.string(
                "NetRunner weight imprinting: \(classes) classes on a \(dimension)-value embedding, scale \(scale)")
            let subgraphList = builder.vector(offsets: [subgraph] + subgraphs.dropFirst().map(reference))
            let codeList = builder.vector(offsets: oldCodes + newCodes)
            var newBuffers = [weightsBuffer, biasBuffer, shapeBuffer]
            // The metadata entries: the extractor's, but its TFLITE_METADATA (which describes
            // the extractor's output), then the classifier's.
            var metadataList: FlatBufferBuilder.Offset?
            if let metadata {
                newBuffers.append(buffer(&builder, bytes: metadata))
                var entries: [FlatBufferBuilder.Offset] = []
                if case .value(let old) = root.tables(6) {
                    entries = old.filter { $0.string(0).value != "TFLITE_METADATA" }.map(reference)
                }
                let name = builder.string("TFLITE_METADATA")
                builder.startTable()
                builder.add(offset: name, field: 0)
                builder.add(UInt32(buffers.count + newBuffers.count - 1), field: 1)
                entries.append(builder.endTable())
                metadataList = builder.vector(offsets: entries)
            }
            let bufferList = builder.vector(offsets: oldBuffers + newBuffers)
            builder.startTable()
            builder.add(root.u32(0) ?? 3, field: 0)
            builder.add(offset: codeList, field: 1)
            builder.add(offset: subgraphList, field: 2)
            builder.add(offset: description, field: 3)
            builder.add(offset: bufferList, field: 4)
            // The metadata (min_runtime_version and the like) is kept; signatures, which name
            // the extractor's output, are not.
            for field in [5, 6] {
                if field == 6, let metadataList {
                    builder.add(offset: metadataList, field: 6)
                } else if let position = root.referencePosition(field) {
                    builder.add(offset: builder.reference(toTailPosition: position), field: field)
                }
            }
            let newRoot = builder.endTable()
            let classifier = builder.finished(root: newRoot, identifier: "TFL3")
            guard !packedFiles.isEmpty else { return classifier }
            return classifier + TFLiteMetadataWriter.packed(packedFiles, at: classifier.count)
        }
    }

    /// A `Buffer` table holding `bytes`, 16-byte aligned.
    private static func buffer(_ builder: inout FlatBufferBuilder, bytes: [UInt8]) -> FlatBufferBuilder.Offset {
        let data = builder.vector(bytes: bytes, alignment: 16)
        builder.startTable()
        builder.add(offset: data, field: 0)
        return builder.endTable()
    }

    /// Values as their little-endian bytes.
    private static func bytes(of values: [Float]) -> [UInt8] {
        values.flatMap { value in withUnsafeBytes(of: value.bitPattern.littleEndian) { Array($0) } }
    }

    private static func bytes(of values: [Int32]) -> [UInt8] {
        values.flatMap { value in withUnsafeBytes(of: value.littleEndian) { Array($0) } }
    }
}
