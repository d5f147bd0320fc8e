/// SSD anchor boxes, generated as MediaPipe's `SsdAnchorsCalculator` generates them, for
/// detectors whose outputs are raw box regressions per anchor (BlazeFace and kin).
public struct SSDAnchors: Equatable, Sendable {
    /// One anchor: a centre and size, relative to the model input (0...1).
    public struct Anchor: Equatable, Hashable, Sendable {
        /// The horizontal centre.
        public var xCenter: Float
        /// The vertical centre.
        public var yCenter: Float
        /// The width.
        public var width: Float
        /// The height.
        public var height: Float
    }

    /// The generation parameters (MediaPipe's `SsdAnchorsCalculatorOptions`).
    public struct Options: Equatable, Hashable, Sendable, Codable {
        /// The model input's width in pixels.
        public var inputWidth: Int
        /// The model input's height in pixels.
        public var inputHeight: Int
        /// The smallest anchor scale.
        public var minScale: Float
        /// The largest anchor scale.
        public var maxScale: Float
        /// The stride of each feature layer.
        public var strides: [Int]
        /// The aspect ratios of each layer's anchors.
        public var aspectRatios: [Float] = [1]
        /// An extra anchor per location with this aspect ratio and an interpolated scale (0: none).
        public var interpolatedScaleAspectRatio: Float = 1
        /// The anchor centre's offset within its cell.
        public var anchorOffsetX: Float = 0.5
        /// The anchor centre's offset within its cell.
        public var anchorOffsetY: Float = 0.5
        /// Whether every anchor has size 1x1 (the regression then carries the size).
        public var fixedAnchorSize: Bool = true
        /// Whether the lowest layer uses three small fixed anchors (SSD MobileNet's convention).
        public var reduceBoxesInLowestLayer: Bool = false

        /// BlazeFace short-range (`face_detection_short_range.tflite`): 896 anchors on a
        /// 128x128 input, as configured in MediaPipe's face detection graph.
        public static let blazeFaceShortRange = Options(
            inputWidth: 128, inputHeight: 128, minScale: 0.1484375, maxScale: 0.75, strides: [8, 16, 16, 16])
    }

    /// The anchors, in the order the model's outputs list them.
    public let anchors: [Anchor]

    /// Generates the anchors for the given options.
    ///
    /// - Parameter options: The generation parameters.
    public init(options: Options) {
        var anchors: [Anchor] = []
        let layerCount = options.strides.count
        var layer = 0
        while layer < layerCount {
            var heights: [Float] = []
            var widths: [Float] = []
            var ratios: [Float] = []
            var scales: [Float] = []
            var sameStride = layer
            while sameStride < layerCount && options.strides[sameStride] == options.strides[layer] {
                let scale = Self.scale(options.minScale, options.maxScale, sameStride, layerCount)
                if sameStride == 0 && options.reduceBoxesInLowestLayer {
                    ratios += [1, 2, 0.5]
                    scales += [0.1, scale, scale]
                } else {
                    for ratio in options.aspectRatios {
                        ratios.append(ratio)
                        scales.append(scale)
                    }
                    if options.interpolatedScaleAspectRatio > 0 {
                        let next =
                            sameStride == layerCount - 1
                            ? 1 : Self.scale(options.minScale, options.maxScale, sameStride + 1, layerCount)
                        scales.append((scale * next).squareRoot())
                        ratios.append(options.interpolatedScaleAspectRatio)
                    }
                }
                sameStride += 1
            }
            for (ratio, scale) in zip(ratios, scales) {
                let root = ratio.squareRoot()
                heights.append(scale / root)
                widths.append(scale * root)
            }
            let stride = options.strides[layer]
            let rows = (options.inputHeight + stride - 1) / stride
            let columns = (options.inputWidth + stride - 1) / stride
            for y in 0..<rows {
                for x in 0..<columns {
                    for index in heights.indices {
                        anchors.append(
                            Anchor(
                                xCenter: (Float(x) + options.anchorOffsetX) / Float(columns),
                                yCenter: (Float(y) + options.anchorOffsetY) / Float(rows),
                                width: options.fixedAnchorSize ? 1 : widths[index],
                                height: options.fixedAnchorSize ? 1 : heights[index]))
                    }
                }
            }
            layer = sameStride
        }
        self.anchors = anchors
    }

    private static func scale(_ minimum: Float, _ maximum: Float, _ index: Int, _ count: Int) -> Float {
        count == 1 ? (minimum + maximum) / 2 : minimum + (maximum - minimum) * Float(index) / Float(count - 1)
    }
}
