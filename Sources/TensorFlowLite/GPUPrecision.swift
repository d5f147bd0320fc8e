/// The arithmetic the GPU computes in (``Interpreter/Options/gpuPrecision``).
///
/// TensorFlowLiteSwift's GPU delegates call the choice `isPrecisionLossAllowed` (off by
/// default); LiteRT calls it the delegate precision.
public enum GPUPrecision: String, CaseIterable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// Float32 throughout: the float MobileNetV2's scores within 0.001 of the CPU's here.
    case fp32
    /// Half precision where the GPU has it (LiteRT's default): faster on most GPUs; the float
    /// MobileNetV2's scores within about 0.01 of the CPU's.
    case fp16

    /// The name, as the command line spells it.
    public var description: String { rawValue }
}
