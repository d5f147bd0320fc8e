// The bytes a TFLite model's tensors declare, read from the flatbuffer before anything is
// allocated: what the runtime will at least allocate for them.
//
// Invariants: reads go through `FlatBuffer`, which bounds-checks every access; every product
// and sum is checked (an overflow is a count too large to hold, never a trap).

import NetRunnerFlatBuffers

/// Sums the tensor sizes a model declares: every subgraph's tensors that have no constant
/// buffer (activations, inputs, outputs, variables), shape times element size.
enum DeclaredTensors {
    /// What the sum found.
    enum Sum: Equatable {
        /// The bytes declared.
        case bytes(Int)
        /// More bytes than an `Int` holds (a crafted shape).
        case overflow
        /// The flatbuffer's structure cannot be read this far; the runtime's verifier says why.
        case unreadable
    }

    // Field numbers from the TFLite schema (schema.fbs).
    private enum Model { static let subgraphs = 2, buffers = 4 }
    private enum SubGraph { static let tensors = 0 }
    private enum Tensor { static let shape = 0, type = 1, buffer = 2 }
    private enum Buffer { static let data = 0, offset = 1 }

    /// The element size of a schema `TensorType` (not the C API's numbering), in bytes.
    ///
    /// Strings, resources and variants count one byte an element (their size is known only at
    /// run time); a 4-bit type one byte (rounded up); a type the schema does not name eight.
    static func elementSize(_ type: UInt8) -> Int {
        switch type {
        case 0, 2, 15: 4  // float32, int32, uint32
        case 1, 7, 16, 18: 2  // float16, int16, uint16, bfloat16
        case 3, 5, 6, 9, 13, 14, 17: 1  // uint8, string, bool, int8, resource, variant, int4
        case 4, 8, 10, 12: 8  // int64, complex64, float64, uint64
        case 11: 16  // complex128
        default: 8
        }
    }

    /// The bytes the tensors of the model in `bytes` declare.
    static func sum(_ bytes: UnsafeRawBufferPointer) -> Sum {
        guard let base = bytes.baseAddress else { return .unreadable }
        let buffer = FlatBuffer(base: base, count: bytes.count)
        guard let model = buffer.root, case .value(let subgraphs) = model.tables(Model.subgraphs) else {
            return .unreadable
        }
        let buffers = model.tables(Model.buffers).value ?? []
        var total = 0
        for subgraph in subgraphs {
            guard case .value(let tensors) = subgraph.tables(SubGraph.tensors) else { return .unreadable }
            for tensor in tensors {
                guard let index = tensor.u32(Tensor.buffer) else { return .unreadable }
                if Int(index) < buffers.count, isConstant(buffers[Int(index)]) { continue }
                guard let type = tensor.u8(Tensor.type),
                    let rank = tensor.vectorCount(Tensor.shape, elementSize: 4).count
                else { return .unreadable }
                var size = elementSize(type)
                for dimension in 0..<rank {
                    guard let extent = tensor.int32Element(Tensor.shape, dimension) else { return .unreadable }
                    // A negative extent is a dynamic one: it counts as 1, the shape it starts with.
                    let (product, overflow) = size.multipliedReportingOverflow(by: max(Int(extent), 1))
                    guard !overflow else { return .overflow }
                    size = extent == 0 ? 0 : product
                }
                let (sum, overflow) = total.addingReportingOverflow(size)
                guard !overflow else { return .overflow }
                total = sum
            }
        }
        return .bytes(total)
    }

    /// Whether a buffer holds constant data: bytes in the flatbuffer, or an offset past it (the
    /// layout of models over 2 GB).
    private static func isConstant(_ buffer: FlatBuffer.Table) -> Bool {
        if let count = buffer.vectorCount(Buffer.data, elementSize: 1).value, count > 0 { return true }
        guard let field = buffer.fieldPosition(Buffer.offset) else { return false }
        let low = buffer.buffer.u32(at: field) ?? 0
        let high = buffer.buffer.u32(at: field + 4) ?? 0
        return low > 1 || high > 0
    }
}
