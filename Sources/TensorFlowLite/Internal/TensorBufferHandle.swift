// Invariants: `raw` wraps `memory` (64-byte aligned, zeroed, with slack) and is destroyed
// exactly once in `deinit`, before `memory` is released; `compiledModel` outlives it.

internal import CLiteRT

/// Owns one LiteRT host-memory tensor buffer and the memory behind it.
///
/// Lifetime: keeps the compiled model it is used with alive.
final class TensorBufferHandle {
    let raw: NRLiteRtTensorBuffer
    let memory: AlignedMemory
    private let compiledModel: CompiledModelHandle

    /// A buffer of `byteCount` bytes for a tensor of `elementType` and `dimensions`.
    init(compiledModel: CompiledModelHandle, elementType: Int32, dimensions: [Int], byteCount: Int) throws {
        guard let memory = AlignedMemory(count: byteCount) else {
            throw LiteRTCallError(function: "aligned_alloc(\(byteCount))", status: .memoryAllocationFailure)
        }
        var type = NRLiteRtRankedTensorType()
        type.element_type = elementType
        type.layout.rank_and_flags = UInt32(dimensions.count & 0x7f)
        withUnsafeMutableBytes(of: &type.layout.dimensions) { raw in
            let dims = raw.bindMemory(to: Int32.self)
            for (index, dimension) in dimensions.prefix(Int(NR_LITERT_TENSOR_MAX_RANK)).enumerated() {
                dims[index] = Int32(clamping: dimension)
            }
        }
        var buffer: NRLiteRtTensorBuffer?
        try check(
            compiledModel.api.pointee.CreateTensorBufferFromHostMemory(&type, memory.base, byteCount, nil, &buffer),
            "LiteRtCreateTensorBufferFromHostMemory")
        guard let buffer else {
            throw LiteRTCallError(function: "LiteRtCreateTensorBufferFromHostMemory", status: .runtimeFailure)
        }
        self.raw = buffer
        self.memory = memory
        self.compiledModel = compiledModel
    }

    deinit { compiledModel.api.pointee.DestroyTensorBuffer(raw) }
}
