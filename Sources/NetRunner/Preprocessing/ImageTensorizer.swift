public import FoundationEssentials
public import NetRunnerImage
import TensorFlowLite

/// Turns images into input tensors for one model, reusing its memory from image to image.
///
/// Crop, resize, channel conversion, normalisation and quantization run as one pass over
/// the model-sized image: the resize goes straight from the decoded image's region to an
/// RGB buffer of the input size, and 256-entry lookup tables per channel (built once)
/// turn each pixel value into the tensor's value, so no per-pixel arithmetic remains.
/// After the first image of a given size, preparing an input allocates nothing.
///
/// - Note: Not thread-safe: use one tensorizer per thread.
public final class ImageTensorizer {
    /// The preprocessing this tensorizer applies.
    public let preprocessing: ImagePreprocessing

    /// The bytes of the input tensor for the last image prepared.
    public private(set) var input: Data

    private let resizer: ImageResizer
    private var scratch: PixelBuffer
    private var placed: PixelBuffer?
    private let byteTables: [UInt8]
    private let floatTables: [Float]

    /// Creates a tensorizer.
    ///
    /// - Parameter preprocessing: What to do to each image.
    /// - Throws: ``NetRunnerError/invalidOption(name:reason:)`` for a normalisation with a
    ///   zero standard deviation or the wrong number of channels.
    public init(preprocessing: ImagePreprocessing) throws(NetRunnerError) {
        self.preprocessing = preprocessing
        self.resizer = ImageResizer(method: preprocessing.resizeMethod)
        let format: PixelFormat = preprocessing.channels == 1 ? .gray8 : .rgb24
        do {
            self.scratch = try PixelBuffer(
                width: preprocessing.size.width, height: preprocessing.size.height, format: format)
        } catch {
            throw .invalidOption(name: "input size", reason: "\(error)")
        }
        self.input = Data(count: preprocessing.byteCount)
        let tables = try Self.tables(for: preprocessing)
        self.byteTables = tables.bytes
        self.floatTables = tables.floats
    }

    /// Prepares the input tensor from a decoded image.
    ///
    /// - Parameter image: The image, as the decoder returned it (its stored size is used to
    ///   map coordinates back when the decoder downscaled it).
    /// - Returns: How the input relates to the original image.
    /// - Throws: ``ImageError`` if the image is empty.
    ///   When the decoder kept only a region (``DecodingOptions/region``), the pixels must
    ///   hold the part of the image this preprocessing resizes.
    /// - Throws: ``ImageError`` if the image is empty, or if it lacks the part the
    ///   preprocessing needs.
    @discardableResult
    public func prepare(_ image: DecodedImage) throws(ImageError) -> ImageTransform {
        guard image.isUpright || image.orientation == .up else { return try prepareTurned(image) }
        let whole = PixelRect(x: 0, y: 0, width: image.fullSize.width, height: image.fullSize.height)
        guard image.region != whole else { return try prepare(image.pixels, originalSize: image.orientedSize) }
        let needed = preprocessing.region(in: image.fullSize)
        guard preprocessing.cropping != .letterbox else {
            throw .emptyRegion(region: needed, width: image.region.width, height: image.region.height)
        }
        try resizer.resize(image.pixels, from: Self.local(needed, in: image.region), into: &scratch)
        fill()
        return ImageTransform(region: needed, decodedSize: image.fullSize, imageSize: image.orientedSize)
    }

    /// A photo the decoder left as stored (``DecodingOptions/defersOrientation``): cropped in
    /// upright terms, then resized and turned in one go, with the bytes of turning first.
    private func prepareTurned(_ image: DecodedImage) throws(ImageError) -> ImageTransform {
        let orientation = image.orientation
        let stored = image.fullSize
        let upright = orientation.swapsDimensions ? PixelSize(width: stored.height, height: stored.width) : stored
        guard preprocessing.cropping != .letterbox else {
            // Letterboxing places the whole upright image: turn it first.
            var turned = image
            turned.pixels = image.pixels.applyingOrientation(orientation)
            turned.region = orientation.uprightRect(forStored: image.region, storedSize: stored)
            turned.fullSize = upright
            turned.isUpright = true
            return try prepare(turned)
        }
        let needed = preprocessing.region(in: upright)
        let wanted = orientation.storedRect(forUpright: needed, storedSize: stored)
        try resizer.resize(
            image.pixels, from: Self.local(wanted, in: image.region), orientation: orientation, into: &scratch)
        fill()
        return ImageTransform(region: needed, decodedSize: upright, imageSize: image.orientedSize)
    }

    /// `needed` in the coordinates of the pixels the decoder kept (`held`, a region of the whole
    /// image), or ``ImageError/emptyRegion(region:width:height:)`` when they lack part of it.
    private static func local(_ needed: PixelRect, in held: PixelRect) throws(ImageError) -> PixelRect {
        guard needed.x >= held.x, needed.y >= held.y, needed.x + needed.width <= held.x + held.width,
            needed.y + needed.height <= held.y + held.height
        else {
            throw .emptyRegion(region: needed, width: held.width, height: held.height)
        }
        return PixelRect(x: needed.x - held.x, y: needed.y - held.y, width: needed.width, height: needed.height)
    }

    /// Prepares the input tensor from pixels.
    ///
    /// - Parameters:
    ///   - pixels: The image (any pixel format; BGRA camera frames included).
    ///   - originalSize: The size of the image these pixels were downscaled from, if any.
    /// - Returns: How the input relates to the original image.
    /// - Throws: ``ImageError`` if the image is empty.
    /// - Complexity: O(region area + input area).
    @discardableResult
    public func prepare(_ pixels: PixelBuffer, originalSize: PixelSize? = nil) throws(ImageError) -> ImageTransform {
        let region = preprocessing.region(in: pixels.size)
        let transform: ImageTransform
        if preprocessing.cropping == .letterbox {
            let placement = preprocessing.letterboxPlacement(for: pixels.size)
            try letterbox(pixels, at: placement)
            transform = ImageTransform(
                letterbox: placement, inputSize: preprocessing.size, decodedSize: pixels.size,
                imageSize: originalSize ?? pixels.size)
        } else {
            try resizer.resize(pixels, from: region, into: &scratch)
            transform = ImageTransform(region: region, decodedSize: pixels.size, imageSize: originalSize ?? pixels.size)
        }
        fill()
        return transform
    }

    /// Turns the model-sized image in the scratch buffer into the input tensor's bytes.
    private func fill() {
        let channels = preprocessing.channels
        let order = preprocessing.channelOrder
        let source = scratch
        if preprocessing.tensorType == .float32 {
            let tables = floatTables
            input.withUnsafeMutableBytes { destination in
                TensorFill.fill(source, channels: channels, order: order, tables: tables, into: destination)
            }
        } else {
            let tables = byteTables
            input.withUnsafeMutableBytes { destination in
                TensorFill.fill(source, channels: channels, order: order, tables: tables, into: destination)
            }
        }
    }

    /// Resizes `pixels` into `placement` of the scratch buffer and blackens the rest.
    private func letterbox(_ pixels: PixelBuffer, at placement: PixelRect) throws(ImageError) {
        var image: PixelBuffer
        if let reused = placed, reused.size == placement.size {
            image = reused
        } else {
            image = try PixelBuffer(width: placement.width, height: placement.height, format: scratch.format)
        }
        placed = nil
        try resizer.resize(pixels, into: &image)
        PixelBuffer.pad(image, at: placement, into: &scratch)
        placed = image
    }

    /// The per-channel lookup tables, in the tensor's channel order.
    private static func tables(
        for preprocessing: ImagePreprocessing
    ) throws(NetRunnerError) -> (bytes: [UInt8], floats: [Float]) {
        let channels = preprocessing.channels
        if let normalization = preprocessing.normalization {
            guard normalization.mean.count == 3, normalization.std.count == 3,
                !normalization.std.contains(0)
            else {
                throw .invalidOption(
                    name: "normalization", reason: "needs one or three means and non-zero standard deviations")
            }
        }
        // Tensor channel c takes the colour R, G, B (or B, G, R) in that position.
        let colours = channels == 1 ? [0] : (preprocessing.channelOrder == .rgb ? [0, 1, 2] : [2, 1, 0])
        var bytes: [UInt8] = []
        var floats: [Float] = []
        for colour in colours {
            for pixel in 0...255 {
                let value = UInt8(pixel)
                // Grayscale inputs normalise with the first channel's parameters.
                let real = preprocessing.normalization?.apply(value, channel: channels == 1 ? 0 : colour)
                switch preprocessing.tensorType {
                case .float32:
                    floats.append(real ?? Float(pixel))
                case .uInt8, .int8:
                    guard let real, let quantization = preprocessing.quantization, quantization.scale > 0 else {
                        bytes.append(value)  // raw bytes (uint8 without normalisation)
                        continue
                    }
                    let quantized = (real / quantization.scale).rounded() + Float(quantization.zeroPoint)
                    if preprocessing.tensorType == .uInt8 {
                        bytes.append(UInt8(min(max(quantized, 0), 255)))
                    } else {
                        bytes.append(UInt8(bitPattern: Int8(min(max(quantized, -128), 127))))
                    }
                default:
                    bytes.append(value)
                }
            }
        }
        return (bytes, floats)
    }

    /// The image an input tensor holds, as the model sees it: the crop or letterbox and the
    /// resize already applied, the normalisation, quantization and channel order undone
    /// through the same lookup tables (each value maps back to the nearest 0-255 pixel), so
    /// the colours look natural when the preprocessing is what the model expects: Net Runner's
    /// "what the model sees" preview.
    ///
    /// - Parameter tensor: The input tensor's bytes (``input``, or the interpreter's input).
    /// - Returns: An RGB (or grayscale) image of the input's size.
    /// - Throws: ``ImageError`` if the bytes are fewer than the input needs.
    public func image(fromInput tensor: Data) throws(ImageError) -> PixelBuffer {
        let channels = preprocessing.channels
        let size = preprocessing.size
        guard tensor.count >= preprocessing.byteCount else {
            throw .bufferTooSmall(provided: tensor.count, required: preprocessing.byteCount)
        }
        let colours = channels == 1 ? [0] : (preprocessing.channelOrder == .rgb ? [0, 1, 2] : [2, 1, 0])
        let isFloat = preprocessing.tensorType == .float32
        // Byte tables: the first pixel value giving each byte (tables are monotonic; a byte no
        // pixel gives maps to the nearest one that does).
        var byteInverse = [UInt8](repeating: 0, count: 256 * channels)
        if !isFloat {
            for channel in 0..<channels {
                let table = byteTables[(256 * channel)..<(256 * channel + 256)].map { Int($0) }
                for byte in 0..<256 {
                    let target = preprocessing.tensorType == .int8 ? Int(Int8(bitPattern: UInt8(byte))) : byte
                    var best = 0
                    var distance = Int.max
                    for (pixel, value) in table.enumerated() {
                        let signed = preprocessing.tensorType == .int8 ? Int(Int8(bitPattern: UInt8(value))) : value
                        if abs(signed - target) < distance { (best, distance) = (pixel, abs(signed - target)) }
                    }
                    byteInverse[256 * channel + byte] = UInt8(best)
                }
            }
        }
        let floats = floatTables
        func nearestPixel(_ value: Float, channel: Int) -> UInt8 {
            let table = floats[(256 * channel)..<(256 * channel + 256)]
            let increasing = table[table.startIndex] <= table[table.endIndex - 1]
            var low = table.startIndex
            var high = table.endIndex - 1
            while low < high {
                let middle = (low + high) / 2
                if increasing ? table[middle] < value : table[middle] > value {
                    low = middle + 1
                } else {
                    high = middle
                }
            }
            if low > table.startIndex, abs(table[low - 1] - value) <= abs(table[low] - value) { low -= 1 }
            return UInt8(low - table.startIndex)
        }
        var pixels = [UInt8](repeating: 0, count: size.width * size.height * channels)
        tensor.withUnsafeBytes { raw in
            for element in 0..<pixels.count {
                let channel = element % channels
                let pixel =
                    isFloat
                    ? nearestPixel(raw.loadUnaligned(fromByteOffset: element * 4, as: Float.self), channel: channel)
                    : byteInverse[256 * channel + Int(raw[element])]
                pixels[element - channel + colours[channel]] = pixel
            }
        }
        let image = try PixelBuffer(
            width: size.width, height: size.height, format: channels == 1 ? .gray8 : .rgb24, bytes: pixels)
        return image
    }
}
