/// Parameters that map a per-tensor quantized value to a real value:
/// `realValue = scale * (quantizedValue - zeroPoint)`.
public struct QuantizationParameters: Equatable, Hashable, Sendable {
    /// The difference between real values of two consecutive quantized values.
    public let scale: Float

    /// The quantized value that represents the real value 0.
    public let zeroPoint: Int

    /// Creates quantization parameters.
    ///
    /// - Parameters:
    ///   - scale: The real-value step between consecutive quantized values.
    ///   - zeroPoint: The quantized value that represents 0.
    public init(scale: Float, zeroPoint: Int) {
        self.scale = scale
        self.zeroPoint = zeroPoint
    }

    /// The real value of one quantized value.
    ///
    /// - Parameter quantizedValue: A value as stored in the tensor.
    /// - Returns: `scale * (quantizedValue - zeroPoint)`.
    public func dequantize(_ quantizedValue: Int) -> Float {
        scale * Float(quantizedValue - zeroPoint)
    }
}
