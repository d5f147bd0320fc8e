// Checks of a TFLite flatbuffer that LiteRT's verifier does not make but its runtime
// relies on: a missing name becomes a `std::string` built from NULL (an abort), an index
// out of range becomes a wild read, a negative or non-finite quantization scale trips a
// CHECK in the kernels (an abort), a per-channel axis past the tensor's rank reads past
// its shape, an 8- or 16-bit tensor whose quantization was wiped while its neighbours
// kept theirs makes a kernel's Prepare divide by a zero multiplier (an abort, in Python's
// interpreter too). Found by fuzzing (see Tests/TensorFlowLiteTests/FuzzTests.swift).
//
// Invariants: reads go through `FlatBuffer`, which bounds-checks every access.

import NetRunnerFlatBuffers

/// A model whose flatbuffer the runtime's verifier accepted but whose contents the runtime
/// would crash on: NetRunner's own finding, not a LiteRT status.
struct ModelIntegrityError: Error, Equatable, CustomStringConvertible {
    /// What is wrong, such as "signature 0 has no key".
    let problem: String

    var description: String { problem }
}

/// Structural checks of a TFLite model's flatbuffer, run before LiteRT sees the bytes.
enum ModelIntegrity {
    // Field numbers from the TFLite schema (schema.fbs).
    private enum Model { static let subgraphs = 2, buffers = 4, signatureDefs = 7 }
    private enum SubGraph { static let tensors = 0, inputs = 1, outputs = 2, operators = 3 }
    private enum Tensor { static let shape = 0, type = 1, buffer = 2, name = 3, quantization = 4 }
    private enum Operator { static let inputs = 1, outputs = 2 }
    /// TensorType numbers of the integer types kernels quantize: uint8, int16, int8.
    private static let quantizableTypes: Set<UInt8> = [3, 7, 9]
    private enum Quantization { static let scale = 2, zeroPoint = 3, quantizedDimension = 6 }
    private enum SignatureDef { static let inputs = 0, outputs = 1, key = 2, subgraphIndex = 4 }
    private enum TensorMap { static let name = 0, tensorIndex = 1 }

    /// Throws a `ModelIntegrityError` naming the first problem.
    static func check(_ bytes: AlignedMemory) throws(ModelIntegrityError) {
        let buffer = FlatBuffer(base: UnsafeRawPointer(bytes.base), count: bytes.count)
        guard let model = buffer.root else { throw problem("the root table is out of range") }
        guard case .value(let subgraphs) = model.tables(Model.subgraphs), !subgraphs.isEmpty else {
            throw problem("the model has no readable subgraph")
        }
        let bufferCount = model.vectorCount(Model.buffers, elementSize: 4).value ?? 0
        var tensorCounts: [Int] = []
        var subgraphInputs: [Set<Int32>] = []
        var subgraphOutputs: [Set<Int32>] = []
        for (index, subgraph) in subgraphs.enumerated() {
            guard case .value(let tensors) = subgraph.tables(SubGraph.tensors) else {
                throw problem("subgraph \(index) has no readable tensor list")
            }
            for (tensorIndex, tensor) in tensors.enumerated() {
                if case .invalid = tensor.string(Tensor.name) {
                    throw problem("subgraph \(index) tensor \(tensorIndex) has a name out of range")
                }
                if case .invalid = tensor.vectorCount(Tensor.shape, elementSize: 4) {
                    throw problem("subgraph \(index) tensor \(tensorIndex) has a shape out of range")
                }
                guard let bufferIndex = tensor.u32(Tensor.buffer), Int(bufferIndex) < max(bufferCount, 1) else {
                    throw problem("subgraph \(index) tensor \(tensorIndex) names a buffer that does not exist")
                }
                try checkQuantization(of: tensor, "subgraph \(index) tensor \(tensorIndex)")
            }
            try checkQuantizedNeighbours(subgraph, tensors: tensors, index: index)
            var lists: [Set<Int32>] = []
            for (field, what) in [(SubGraph.inputs, "input"), (SubGraph.outputs, "output")] {
                var list: Set<Int32> = []
                defer { lists.append(list) }
                guard case .value(let count) = subgraph.vectorCount(field, elementSize: 4) else {
                    if case .invalid = subgraph.vectorCount(field, elementSize: 4) {
                        throw problem("subgraph \(index) has an \(what) list out of range")
                    }
                    continue
                }
                for element in 0..<count {
                    guard let tensor = subgraph.int32Element(field, element), tensor >= 0, Int(tensor) < tensors.count
                    else { throw problem("subgraph \(index) \(what) \(element) names a tensor that does not exist") }
                    list.insert(tensor)
                }
            }
            subgraphInputs.append(lists[0])
            subgraphOutputs.append(lists[1])
            if case .invalid = subgraph.tables(SubGraph.operators) {
                throw problem("subgraph \(index) has an operator list out of range")
            }
            tensorCounts.append(tensors.count)
        }
        switch model.tables(Model.signatureDefs) {
        case .absent:
            break
        case .invalid:
            throw problem("the signature list is out of range")
        case .value(let signatures):
            for (index, signature) in signatures.enumerated() {
                guard case .value = signature.string(SignatureDef.key) else {
                    throw problem("signature \(index) has no key")
                }
                guard let subgraph = signature.u32(SignatureDef.subgraphIndex), Int(subgraph) < tensorCounts.count
                else {
                    throw problem("signature \(index) names a subgraph that does not exist")
                }
                let subgraphIndex = Int(subgraph)
                for (field, what, listed) in [
                    (SignatureDef.inputs, "input", subgraphInputs[subgraphIndex]),
                    (SignatureDef.outputs, "output", subgraphOutputs[subgraphIndex]),
                ] {
                    guard case .value(let maps) = signature.tables(field) else {
                        if case .invalid = signature.tables(field) {
                            throw problem("signature \(index) has an \(what) list out of range")
                        }
                        continue
                    }
                    for (element, map) in maps.enumerated() {
                        guard case .value = map.string(TensorMap.name) else {
                            throw problem("signature \(index) \(what) \(element) has no name")
                        }
                        guard let tensor = map.u32(TensorMap.tensorIndex), Int(tensor) < tensorCounts[subgraphIndex]
                        else {
                            throw problem("signature \(index) \(what) \(element) names a tensor that does not exist")
                        }
                        // The runtime names signature tensors by finding them among the
                        // subgraph's inputs (outputs); one missing there gets a NULL name.
                        guard listed.contains(Int32(bitPattern: tensor)) else {
                            throw problem("signature \(index) \(what) \(element) is not an \(what) of its subgraph")
                        }
                    }
                }
            }
        }
    }

    /// Checks quantization parameters the kernels rely on without checking them.
    ///
    /// Zero points must come only alongside scales, no scale may be negative or infinite,
    /// and a per-channel axis must lie inside the tensor's shape. Zero scales are allowed:
    /// converters write them for all-zero constants (the runtime still aborts on some, such
    /// as an ADD input; see FuzzTests).
    private static func checkQuantization(of tensor: FlatBuffer.Table, _ what: String) throws(ModelIntegrityError) {
        // The verifier has accepted the table; this reader only refuses vtables too short to
        // hold a field, which the runtime reads as "no quantization".
        guard case .value(let quantization) = tensor.table(Tensor.quantization) else { return }
        guard let scaleCount = quantization.vectorCount(Quantization.scale, elementSize: 4).count,
            let zeroPointCount = quantization.vectorCount(Quantization.zeroPoint, elementSize: 8).count,
            let axisBits = quantization.u32(Quantization.quantizedDimension)
        else {
            throw problem("\(what) has quantization parameters out of range")
        }
        guard scaleCount == zeroPointCount || (scaleCount > 0 && zeroPointCount == 0) else {
            throw problem("\(what) has \(scaleCount) quantization scales and \(zeroPointCount) zero points")
        }
        for element in 0..<scaleCount {
            guard let bits = quantization.int32Element(Quantization.scale, element) else {
                throw problem("\(what) has quantization parameters out of range")
            }
            let scale = Float(bitPattern: UInt32(bitPattern: bits))
            guard scale.isFinite, scale >= 0 else {
                throw problem("\(what) has the quantization scale \(scale); scales must be finite and not negative")
            }
            guard scale == 0 || scale.isNormal else {
                throw problem("\(what) has the subnormal quantization scale \(scale)")
            }
        }
        let rank = tensor.vectorCount(Tensor.shape, elementSize: 4).count ?? 0
        let axis = Int(Int32(bitPattern: axisBits))
        guard (axis == 0 && scaleCount <= 1) || (0..<rank).contains(axis) else {
            throw problem("\(what) is quantized along axis \(axis) but has rank \(rank)")
        }
    }

    /// What the operator checks need to know of one tensor.
    private struct TensorSummary {
        /// Whether the type is one kernels quantize (uint8, int16, int8).
        var isQuantizable: Bool
        /// Whether the tensor has at least one quantization scale.
        var isQuantized: Bool
        /// Whether every scale it has is zero.
        var hasOnlyZeroScales: Bool
    }

    /// Within one operator, 8- and 16-bit tensors are either all quantized or none is, and a
    /// quantized activation (a subgraph input or an operator output) has a non-zero scale.
    ///
    /// Converters write zero scales only for all-zero constants; a tensor computed at run
    /// time with scale 0, or one unquantized 8-bit tensor among quantized ones, only comes
    /// from a damaged file, and the kernels' Prepare aborts on both.
    private static func checkQuantizedNeighbours(
        _ subgraph: FlatBuffer.Table, tensors: [FlatBuffer.Table], index: Int
    ) throws(ModelIntegrityError) {
        let summaries = tensors.map { tensor -> TensorSummary in
            let type = tensor.u8(Tensor.type) ?? 0
            var scales: [Float] = []
            if case .value(let quantization) = tensor.table(Tensor.quantization),
                let count = quantization.vectorCount(Quantization.scale, elementSize: 4).count
            {
                scales = (0..<count).compactMap { element in
                    quantization.int32Element(Quantization.scale, element).map {
                        Float(bitPattern: UInt32(bitPattern: $0))
                    }
                }
            }
            return TensorSummary(
                isQuantizable: quantizableTypes.contains(type), isQuantized: !scales.isEmpty,
                hasOnlyZeroScales: !scales.isEmpty && scales.allSatisfy { $0 == 0 })
        }
        var activations: Set<Int> = []
        if let count = subgraph.vectorCount(SubGraph.inputs, elementSize: 4).value {
            for element in 0..<count {
                if let tensor = subgraph.int32Element(SubGraph.inputs, element) { activations.insert(Int(tensor)) }
            }
        }
        guard case .value(let operators) = subgraph.tables(SubGraph.operators) else { return }
        for (operatorIndex, op) in operators.enumerated() {
            var quantized: [Int] = []
            var plain: [Int] = []
            for field in [Operator.inputs, Operator.outputs] {
                guard let count = op.vectorCount(field, elementSize: 4).value else { continue }
                for element in 0..<count {
                    guard let raw = op.int32Element(field, element), raw >= 0, Int(raw) < summaries.count else {
                        continue
                    }
                    let tensor = Int(raw)
                    if field == Operator.outputs { activations.insert(tensor) }
                    guard summaries[tensor].isQuantizable else { continue }
                    if summaries[tensor].isQuantized { quantized.append(tensor) } else { plain.append(tensor) }
                }
            }
            if let unquantized = plain.first, !quantized.isEmpty {
                throw problem(
                    "subgraph \(index) operator \(operatorIndex): tensor \(unquantized) has no quantization "
                        + "but tensor \(quantized[0]) beside it has")
            }
        }
        for tensor in activations.sorted() where tensor < summaries.count {
            let summary = summaries[tensor]
            if summary.isQuantizable && summary.hasOnlyZeroScales {
                throw problem(
                    "subgraph \(index) tensor \(tensor) is computed at run time but has the quantization scale 0")
            }
        }
    }

    private static func problem(_ text: String) -> ModelIntegrityError {
        ModelIntegrityError(problem: text)
    }
}
