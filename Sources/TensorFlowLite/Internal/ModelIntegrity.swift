// Checks of a TFLite flatbuffer that LiteRT's verifier does not make but its runtime
// relies on: a missing name becomes a `std::string` built from NULL (an abort), an index
// out of range becomes a wild read. Found by fuzzing (see Tests/TensorFlowLiteTests).
//
// Invariants: reads go through `FlatBuffer`, which bounds-checks every access.

/// Structural checks of a TFLite model's flatbuffer, run before LiteRT sees the bytes.
enum ModelIntegrity {
    // Field numbers from the TFLite schema (schema.fbs).
    private enum Model { static let subgraphs = 2, buffers = 4, signatureDefs = 7 }
    private enum SubGraph { static let tensors = 0, inputs = 1, outputs = 2, operators = 3 }
    private enum Tensor { static let shape = 0, buffer = 2, name = 3 }
    private enum SignatureDef { static let inputs = 0, outputs = 1, key = 2, subgraphIndex = 4 }
    private enum TensorMap { static let name = 0, tensorIndex = 1 }

    /// Throws a `LiteRTCallError` (status InvalidFlatbuffer) naming the first problem.
    static func check(_ bytes: AlignedMemory) throws(LiteRTCallError) {
        let buffer = FlatBuffer(base: UnsafeRawPointer(bytes.base), count: bytes.count)
        guard let model = buffer.root else { throw problem("the root table is out of range") }
        guard case .value(let subgraphs) = model.tables(Model.subgraphs), !subgraphs.isEmpty else {
            throw problem("the model has no readable subgraph")
        }
        let bufferCount = model.vectorCount(Model.buffers, elementSize: 4).value ?? 0
        var tensorCounts: [Int] = []
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
            }
            for (field, what) in [(SubGraph.inputs, "input"), (SubGraph.outputs, "output")] {
                guard case .value(let count) = subgraph.vectorCount(field, elementSize: 4) else {
                    if case .invalid = subgraph.vectorCount(field, elementSize: 4) {
                        throw problem("subgraph \(index) has an \(what) list out of range")
                    }
                    continue
                }
                for element in 0..<count {
                    guard let tensor = subgraph.int32Element(field, element), tensor >= 0, Int(tensor) < tensors.count
                    else { throw problem("subgraph \(index) \(what) \(element) names a tensor that does not exist") }
                }
            }
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
                for (field, what) in [(SignatureDef.inputs, "input"), (SignatureDef.outputs, "output")] {
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
                        guard let tensor = map.u32(TensorMap.tensorIndex), Int(tensor) < tensorCounts[Int(subgraph)]
                        else {
                            throw problem("signature \(index) \(what) \(element) names a tensor that does not exist")
                        }
                    }
                }
            }
        }
    }

    private static func problem(_ text: String) -> LiteRTCallError {
        LiteRTCallError(function: "model check: \(text)", status: 501)
    }
}
