public import NetRunnerImage
public import TensorFlowLite

/// Everything that turns an image into a model's input tensor, decided once per model.
///
/// The seed apps make these choices in code (crop the largest centred square, drop alpha,
/// BGRA to RGB, divide by 255 for float models, raw bytes for quantized ones); TensorIO's
/// model.json and TFLite metadata state them as data. Both end here, in one value that is
/// computed once and reused for every image:
///
///     let input = try interpreter.input(at: 0)
///     let preprocessing = try ImagePreprocessing(input: input, cropping: .centerSquare)
///
/// - Note: A value type: share it freely between threads.
public struct ImagePreprocessing: Equatable, Hashable, Sendable {
    /// How the image is fitted to the model's input size.
    public enum Cropping: String, Equatable, Hashable, Sendable, Codable, CaseIterable {
        /// Crop the largest centred square, then resize: the seed's `centerThumbnail(ofSize:)`
        /// and TensorIO's vision pipeline.
        case centerSquare
        /// Resize the whole image, ignoring its aspect ratio: the Task Library's and the SSD
        /// example's `resized(to:)`.
        case stretch
        /// Keep the aspect ratio: pad the image with black to a centred square (or to the
        /// input's aspect), then resize; MediaPipe's `keep_aspect_ratio` with `BORDER_ZERO`.
        case letterbox
    }

    /// The order of the colour channels in the tensor.
    public enum ChannelOrder: String, Equatable, Hashable, Sendable, Codable, CaseIterable {
        /// Red, green, blue (TensorIO's `"RGB"`).
        case rgb
        /// Blue, green, red (TensorIO's `"BGR"`).
        case bgr
    }

    /// Per-channel normalisation of 0-255 pixel values: `(pixel - mean[c]) / std[c]`.
    ///
    /// This is the Task Library's `NormalizationOptions`; TensorIO's `scale` and `bias`
    /// (`pixel * scale + bias`) are the same thing with `std = 1 / scale` and
    /// `mean = -bias / scale`.
    public struct Normalization: Equatable, Hashable, Sendable, Codable {
        /// The value subtracted from each channel (R, G, B order).
        public var mean: [Float]
        /// The divisor of each channel (R, G, B order).
        public var std: [Float]

        /// Creates a normalisation; one value applies to every channel.
        ///
        /// - Parameters:
        ///   - mean: One value, or one per channel (R, G, B).
        ///   - std: One value, or one per channel (R, G, B); none may be zero.
        public init(mean: [Float], std: [Float]) {
            self.mean = mean.count == 1 ? Array(repeating: mean[0], count: 3) : mean
            self.std = std.count == 1 ? Array(repeating: std[0], count: 3) : std
        }

        /// Values in [0, 1]: `pixel / 255` (TensorIO `"[0,1]"`; the seeds' float models).
        public static let zeroToOne = Normalization(mean: [0], std: [255])
        /// Values in [-1, 1]: `pixel / 127.5 - 1` (TensorIO `"[-1,1]"`; MobileNet, BlazeFace).
        public static let minusOneToOne = Normalization(mean: [127.5], std: [127.5])
        /// Raw 0-255 values as floats.
        public static let identity = Normalization(mean: [0], std: [1])

        /// The normalised value of one 0-255 pixel value in channel `channel` (0 R, 1 G, 2 B).
        ///
        /// - Parameters:
        ///   - pixel: The pixel value.
        ///   - channel: The channel.
        /// - Returns: `(pixel - mean) / std`.
        public func apply(_ pixel: UInt8, channel: Int) -> Float {
            (Float(pixel) - mean[channel]) / std[channel]
        }
    }

    /// The index of the model input the image goes to.
    public var inputIndex: Int
    /// The model's input width and height.
    public var size: PixelSize
    /// The number of channels in the tensor (3 for colour, 1 for grayscale).
    public var channels: Int
    /// The tensor's element type: `uInt8`, `int8` or `float32`.
    public var tensorType: Tensor.DataType
    /// The input's quantization, for `uInt8` and `int8` tensors.
    public var quantization: QuantizationParameters?
    /// How 0-255 pixels map to real values; `nil` for a `uInt8` tensor fed raw bytes.
    public var normalization: Normalization?
    /// The channel order.
    public var channelOrder: ChannelOrder
    /// How the image is fitted to the input size.
    public var cropping: Cropping
    /// The resampling filter.
    public var resizeMethod: ResizeMethod

    /// Creates a preprocessing from each choice (a model description's, for example).
    ///
    /// - Parameters:
    ///   - inputIndex: The model input the image goes to.
    ///   - size: The input's width and height.
    ///   - channels: 3 for colour, 1 for grayscale.
    ///   - tensorType: `uInt8`, `int8` or `float32`.
    ///   - quantization: The input's quantization, for integer tensors.
    ///   - normalization: How 0-255 pixels map to real values; `nil` for raw `uInt8` bytes.
    ///   - channelOrder: The channel order.
    ///   - cropping: How images are fitted to the input size.
    ///   - resizeMethod: The resampling filter.
    public init(
        inputIndex: Int, size: PixelSize, channels: Int, tensorType: Tensor.DataType,
        quantization: QuantizationParameters?, normalization: Normalization?, channelOrder: ChannelOrder,
        cropping: Cropping, resizeMethod: ResizeMethod
    ) {
        self.inputIndex = inputIndex
        self.size = size
        self.channels = channels
        self.tensorType = tensorType
        self.quantization = quantization
        self.normalization = normalization
        self.channelOrder = channelOrder
        self.cropping = cropping
        self.resizeMethod = resizeMethod
    }

    /// Derives the preprocessing from a model's input tensor, with the seeds' defaults.
    ///
    /// Defaults where the model says nothing: float inputs get `pixel / 255`, `uInt8`
    /// inputs get the raw bytes, `int8` inputs get `pixel / 255` quantized with the
    /// tensor's own scale and zero point (raw bytes minus 128 for the usual scale 1/255).
    ///
    /// - Parameters:
    ///   - input: The model's input tensor (after `allocateTensors()`).
    ///   - inputIndex: Its index.
    ///   - cropping: How to fit images to the input size.
    ///   - normalization: How to normalise; `nil` for the defaults above.
    ///   - channelOrder: The tensor's channel order.
    ///   - resizeMethod: The resampling filter.
    ///   - model: The model's name, for errors.
    /// - Throws: ``NetRunnerError/notAnImageModel(model:reason:)`` when the input is not a
    ///   `[1, height, width, 3]` (or 1-channel) tensor of `uInt8`, `int8` or `float32`.
    public init(
        input: Tensor, inputIndex: Int = 0, cropping: Cropping, normalization: Normalization? = nil,
        channelOrder: ChannelOrder = .rgb, resizeMethod: ResizeMethod = .bilinear, model: String = "the model"
    ) throws(NetRunnerError) {
        let dimensions = input.shape.dimensions
        let shape = dimensions.count == 4 ? Array(dimensions.dropFirst()) : dimensions
        guard dimensions.count == 3 || (dimensions.count == 4 && dimensions[0] == 1), shape.count == 3,
            shape[0] > 0, shape[1] > 0, [1, 3].contains(shape[2])
        else {
            throw .notAnImageModel(
                model: model,
                reason: "input \(inputIndex) \"\(input.name)\" has shape \(input.shape); "
                    + "an image input is [1, height, width, 3] (or 1 channel)")
        }
        guard [.uInt8, .int8, .float32].contains(input.dataType) else {
            throw .notAnImageModel(
                model: model,
                reason:
                    "input \(inputIndex) \"\(input.name)\" is \(input.dataType); image inputs are uint8, int8 or float32"
            )
        }
        if input.dataType != .float32 && input.quantizationParameters == nil && input.dataType == .int8 {
            throw .notAnImageModel(
                model: model, reason: "input \(inputIndex) \"\(input.name)\" is int8 without quantization parameters")
        }
        self.inputIndex = inputIndex
        self.size = PixelSize(width: shape[1], height: shape[0])
        self.channels = shape[2]
        self.tensorType = input.dataType
        self.quantization = input.quantizationParameters
        switch input.dataType {
        case .uInt8: self.normalization = normalization
        default: self.normalization = normalization ?? .zeroToOne
        }
        self.channelOrder = channelOrder
        self.cropping = cropping
        self.resizeMethod = resizeMethod
    }

    /// The number of bytes of the input tensor.
    public var byteCount: Int {
        size.width * size.height * channels * (tensorType == .float32 ? 4 : 1)
    }

    /// The part of an image of the given size that is resized to the input.
    ///
    /// - Parameter imageSize: The image's size.
    /// - Returns: The centred square for ``Cropping/centerSquare``, the whole image otherwise
    ///   (``Cropping/letterbox`` pads around all of it).
    public func region(in imageSize: PixelSize) -> PixelRect {
        switch cropping {
        case .centerSquare: PixelRect.centerSquare(in: imageSize)
        case .stretch, .letterbox: PixelRect(x: 0, y: 0, width: imageSize.width, height: imageSize.height)
        }
    }

    /// Where an image of the given size lands inside the input when letterboxed: its size
    /// and offset in input pixels (the rest is black).
    ///
    /// - Parameter imageSize: The image's size.
    /// - Returns: The placement, filling the input in one dimension.
    public func letterboxPlacement(for imageSize: PixelSize) -> PixelRect {
        let scale = min(
            Double(size.width) / Double(max(imageSize.width, 1)), Double(size.height) / Double(max(imageSize.height, 1))
        )
        let width = min(size.width, max(1, Int((Double(imageSize.width) * scale).rounded())))
        let height = min(size.height, max(1, Int((Double(imageSize.height) * scale).rounded())))
        return PixelRect(x: (size.width - width) / 2, y: (size.height - height) / 2, width: width, height: height)
    }
}

extension ImagePreprocessing {
    /// The decoding options for this input: only the part of the image it is made from.
    ///
    /// That part (the centre square for ``Cropping/centerSquare``) has a full decode's pixels,
    /// so the input equals a full decode followed by the crop and the resize, as Pillow
    /// without `draft` gives. A turned photo's pixels stay as stored
    /// (``DecodingOptions/defersOrientation``) except for letterboxing: ``ImageTensorizer``
    /// turns them upright as it resizes, with the same bytes.
    ///
    /// With `scalesWhileDecoding`, JPEGs are also downscaled in the DCT domain, by a power of
    /// two (libjpeg-turbo's SIMD scales, as Pillow's `draft()` picks them), keeping at least 5/4
    /// of the input's size in the part kept; the antialiased resize then makes the input. On
    /// 400 varied photos this keeps the exact path's top-1 on 343 where `draft()` keeps plain
    /// Pillow's on 316 (scaling straight to the input's size: 340, and one sure answer lost).
    /// A progressive JPEG reads only the scans that carry the low frequencies the scale keeps
    /// (``ProgressiveScans/lowFrequencies``): on 96 progressive photos of 1-12 MP, 2.3x the
    /// speed of reading every scan, with the exact path's top-1 kept as often.
    /// A HEIC is decoded from its embedded thumbnail where that is at least the input's size in
    /// the part kept (``DecodingOptions/minimumThumbnailSize``).
    ///
    /// - Parameters:
    ///   - maximumPixelCount: The largest image to decode.
    ///   - scalesWhileDecoding: `true` to scale large JPEGs in the DCT domain (faster on large
    ///     photos; the input differs slightly from Python's).
    /// - Returns: The options.
    public func decodingOptions(maximumPixelCount: Int, scalesWhileDecoding: Bool = false) -> DecodingOptions {
        var decoding = DecodingOptions()
        decoding.maximumPixelCount = maximumPixelCount
        if cropping == .centerSquare { decoding.region = .centerSquare }
        // A turned photo is turned while resizing (ImageTensorizer), not copied turned at full size.
        decoding.defersOrientation = cropping != .letterbox
        guard scalesWhileDecoding else { return decoding }
        decoding.scalesByPowersOfTwo = true
        decoding.progressiveScans = .lowFrequencies
        decoding.minimumSize = PixelSize(width: (5 * size.width + 3) / 4, height: (5 * size.height + 3) / 4)
        // A HEIC's own thumbnail, where it covers the input in the part kept (an iPhone's 320x240
        // does for a 224x224 classifier and a 128x128 detector).
        decoding.minimumThumbnailSize = size
        if cropping == .centerSquare {
            let side = (5 * max(size.width, size.height) + 3) / 4
            decoding.minimumSize = PixelSize(width: side, height: side)
            decoding.minimumThumbnailSize = .square(max(size.width, size.height))
        }
        return decoding
    }
}
