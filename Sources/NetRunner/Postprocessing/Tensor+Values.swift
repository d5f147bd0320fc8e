import FoundationEssentials
public import TensorFlowLite

extension Tensor {
    /// The tensor's values as real numbers: `float32` as they are, `uint8` and `int8`
    /// dequantized by the tensor's quantization, `int32` and `int64` converted.
    ///
    ///     let scores = try interpreter.output(at: 0).dequantizedValues()
    ///
    /// - Parameter fallback: The quantization used for an integer tensor that has none of its
    ///   own (scale 1, zero point 0 when `nil`).
    /// - Returns: The values in the tensor's order.
    /// - Throws: ``NetRunnerError/unsupportedOutputs(model:reason:)`` for other element types.
    /// - Complexity: O(element count).
    public func dequantizedValues(fallback: QuantizationParameters? = nil) throws(NetRunnerError) -> [Float] {
        let q = quantizationParameters ?? fallback ?? QuantizationParameters(scale: 1, zeroPoint: 0)
        switch dataType {
        case .float32:
            return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        case .uInt8:
            return Scores.dequantize(data, scale: q.scale, zeroPoint: q.zeroPoint)
        case .int8:
            return Scores.dequantize(data.lazy.map { Int8(bitPattern: $0) }, scale: q.scale, zeroPoint: q.zeroPoint)
        case .int32:
            return data.withUnsafeBytes { $0.bindMemory(to: Int32.self).map { Float($0) } }
        case .int64:
            return data.withUnsafeBytes { $0.bindMemory(to: Int64.self).map { Float($0) } }
        default:
            throw .unsupportedOutputs(
                model: "the model", reason: "tensor \"\(name)\" is \(dataType), not a number type")
        }
    }
}
