/// Parameters of a tensor quantized per channel along one axis: channel `c` uses
/// `realValue = scales[c] * (quantizedValue - zeroPoints[c])`.
public struct PerChannelQuantizationParameters: Equatable, Hashable, Sendable {
    /// The scale of each channel.
    public let scales: [Float]

    /// The zero point of each channel.
    public let zeroPoints: [Int]

    /// The axis of the tensor along which the channels lie.
    public let quantizedDimension: Int

    /// Creates per-channel quantization parameters.
    ///
    /// - Parameters:
    ///   - scales: The scale of each channel.
    ///   - zeroPoints: The zero point of each channel.
    ///   - quantizedDimension: The axis the channels lie along.
    public init(scales: [Float], zeroPoints: [Int], quantizedDimension: Int) {
        self.scales = scales
        self.zeroPoints = zeroPoints
        self.quantizedDimension = quantizedDimension
    }
}
