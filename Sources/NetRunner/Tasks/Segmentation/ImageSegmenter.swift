import FoundationEssentials
import NetRunnerImage
import NetRunnerSupport
import TensorFlowLite

/// Labels every pixel of an image with a class, with a semantic segmentation model such as
/// DeepLab v3 (Pascal VOC's 21 classes).
///
///     let segmenter = try ImageSegmenter(modelPath: "Models/deeplabv3_mnv2_pascal_quant.tflite")
///     let result = try segmenter.run(.file("bird.png"))
///     for area in result.areas { print(area.label ?? "class \(area.index)", area.pixels) }
///
/// The whole image is resized to the input (no crop, as Python's reference does). The model's
/// first output is either class indices (`[1, H, W]`, int64 for Coral's DeepLab) or scores
/// (`[1, H, W, classes]`, float or quantized; the best class of each pixel is taken). The
/// ``CategoryMask`` is made at the image's size by nearest neighbour (Pillow's `NEAREST`), row
/// by row: a byte per image pixel and nothing per class, so a 100-megapixel photo needs about
/// 100 MB for its mask. With ``Options/maskResolution`` ``CategoryMask/Resolution/model`` it
/// stays at the model's output resolution (513 x 513 for DeepLab) and the image-size one is
/// never made; the areas are the image's pixels either way. Labels are the model's (a labels file, its description or metadata);
/// a model without any is answered by class index (a class-index output such as DeepLab's
/// says nothing of its classes: Pascal VOC's and Cityscapes' models look alike), and
/// `--labels Models/pascal_voc_segmentation_labels.txt` (``pascalVOCLabels``) names DeepLab's.
///
/// - Note: Not thread-safe (it owns an ``Interpreter``); create one per thread.
public final class ImageSegmenter: VisionTask, CoreBackedVisionTask {
    /// Options of a segmenter: the ``BaseOptions`` and the mask's resolution.
    public struct Options: VisionTaskOptions {
        /// Threads, accelerator, error logging and decoding (``BaseOptions``).
        public var baseOptions = BaseOptions()
        /// The category mask's size: the image's (``CategoryMask/Resolution/image``, the
        /// default), or the model's output's (``CategoryMask/Resolution/model``), which never
        /// makes the image-size mask: 263 kB for DeepLab whatever the photo, where a
        /// 100-megapixel photo's mask is 100 MB.
        public var maskResolution = CategoryMask.Resolution.image

        /// Creates the default options.
        public init() {}

        /// Sets the mask's resolution (``ResultOptions/maskResolution``, `nil` the image's size).
        ///
        /// - Parameter results: The answer options.
        public mutating func apply(_ results: ResultOptions) {
            maskResolution = results.maskResolution ?? .image
        }
    }

    /// Pascal VOC 2012's 21 classes, `background` first (Coral's `pascal_voc_segmentation_labels.txt`).
    public static let pascalVOCLabels = [
        "background", "aeroplane", "bicycle", "bird", "boat", "bottle", "bus", "car", "cat", "chair", "cow",
        "diningtable", "dog", "horse", "motorbike", "person", "pottedplant", "sheep", "sofa", "train", "tvmonitor",
    ]

    /// What the model's first output holds.
    enum Output: Equatable {
        /// A class index per pixel.
        case classIndices(height: Int, width: Int)
        /// A score per class per pixel.
        case scores(height: Int, width: Int, classes: Int)

        var height: Int {
            switch self {
            case .classIndices(let height, _), .scores(let height, _, _): height
            }
        }
        var width: Int {
            switch self {
            case .classIndices(_, let width), .scores(_, let width, _): width
            }
        }
    }

    /// ``ImageTask/Kind/segmentation``.
    public static var kind: ImageTask.Kind { .segmentation }

    /// The options the segmenter was created with.
    public let options: Options
    /// The labels of the model's classes.
    public let labels: LabelMap?

    let core: VisionTaskCore
    private let output: Output

    /// Creates a segmenter for a loaded model.
    ///
    /// - Parameters:
    ///   - model: The model.
    ///   - options: The options.
    /// - Throws: ``InterpreterError`` for a bad model, ``NetRunnerError/notAnImageModel(model:reason:)``
    ///   for an input that is not an image, ``NetRunnerError/unsupportedOutputs(model:reason:)``
    ///   naming the outputs' shapes for a first output that is not a class map,
    ///   ``NetRunnerError/labelCountMismatch(file:labels:classes:)`` for labels that do not fit.
    public init(model: LoadedModel, options: Options = Options()) throws {
        let (interpreter, core) = try VisionTaskCore.imageTask(
            for: model, options: options, taskDefaults: .init(cropping: .stretch, normalization: .minusOneToOne))
        let outputs = try (0..<interpreter.outputTensorCount).map { try interpreter.output(at: $0) }
        guard let output = Self.output(of: outputs[0]) else {
            let shapes = outputs.map { "\($0.dataType) \($0.shape.dimensions)" }.joined(separator: ", ")
            throw NetRunnerError.unsupportedOutputs(
                model: model.name,
                reason: "a segmenter needs a first output of class indices [1, height, width] (int64, int32 or "
                    + "uint8, DeepLab's) or of scores [1, height, width, classes], at least 2x2; this model outputs "
                    + "\(shapes)")
        }
        var classCount: Int? = nil
        if case .scores(_, _, let classes) = output { classCount = classes }
        self.core = core
        self.output = output
        self.labels = try model.labels(forOutput: 0, classCount: classCount)
        self.options = options
    }

    /// The class map a tensor holds, or `nil`: at least 2x2 pixels (MoveNet's `[1, 1, 17, 3]`
    /// keypoints are no map of 1x17 pixels and 3 classes).
    static func output(of tensor: Tensor) -> Output? {
        let dimensions = tensor.shape.dimensions
        guard dimensions.count == 3 || dimensions.count == 4, dimensions[0] == 1, dimensions.allSatisfy({ $0 > 0 }),
            dimensions[1] >= 2, dimensions[2] >= 2
        else { return nil }
        let (height, width) = (dimensions[1], dimensions[2])
        let channels = dimensions.count == 4 ? dimensions[3] : 1
        if channels == 1 {
            return [.int64, .int32, .uInt8].contains(tensor.dataType)
                ? .classIndices(height: height, width: width) : nil
        }
        return [.float32, .uInt8, .int8].contains(tensor.dataType)
            ? .scores(height: height, width: width, classes: channels) : nil
    }

    /// Labels every pixel of an image in any form (file, bytes, pixels, decoded or prepared).
    ///
    /// - Parameter image: The image.
    /// - Returns: The category mask at the original image's size (or the model's, as
    ///   ``Options/maskResolution`` asks), each class's area in the image's pixels, and the
    ///   time each stage took.
    /// - Throws: ``ImageError`` for an unreadable image, ``InterpreterError`` from the runtime.
    public func run(_ image: ImageInput) throws -> SegmentationResult {
        let run = try core.run(image)
        let clock = ContinuousClock()
        let start = clock.now
        let tensor = try core.interpreter.output(at: 0)
        let small = Self.classIndices(of: tensor.data, type: tensor.dataType, output: output)
        let imageSize = run.transform.imageSize
        let size =
            options.maskResolution == .model ? PixelSize(width: output.width, height: output.height) : imageSize
        let mask = Self.mask(small, width: output.width, height: output.height, transform: run.transform, size: size)
        if size == imageSize {
            return SegmentationResult(
                categoryMask: mask, labels: labels, timings: run.timings(postprocessing: clock.now - start))
        }
        let counts = Self.classCounts(small, width: output.width, height: output.height, transform: run.transform)
        return SegmentationResult(
            categoryMask: mask, imageSize: imageSize, areas: SegmentationResult.areas(counts: counts, labels: labels),
            timings: run.timings(postprocessing: clock.now - start))
    }

    /// The class index of each of the output's pixels: the index itself (255 for one that
    /// does not fit a byte), or the best-scoring class (the first of equal scores, as numpy's
    /// `argmax`).
    static func classIndices(of data: Data, type: Tensor.DataType, output: Output) -> [UInt8] {
        let count = output.width * output.height
        var indices = [UInt8](repeating: CategoryMask.unknown, count: count)
        data.withUnsafeBytes { bytes in
            switch output {
            case .classIndices:
                for i in 0..<count {
                    let value: Int
                    switch type {
                    case .int64: value = Int(bytes.loadUnaligned(fromByteOffset: 8 * i, as: Int64.self))
                    case .int32: value = Int(bytes.loadUnaligned(fromByteOffset: 4 * i, as: Int32.self))
                    default: value = Int(bytes[i])
                    }
                    if value >= 0 && value < Int(CategoryMask.unknown) { indices[i] = UInt8(value) }
                }
            case .scores(_, _, let classes):
                let best = min(classes, Int(CategoryMask.unknown))
                for i in 0..<count {
                    let base = i * classes
                    var winner = 0
                    switch type {
                    case .float32:
                        var top = -Float.infinity
                        for c in 0..<best {
                            let score = bytes.loadUnaligned(fromByteOffset: 4 * (base + c), as: Float.self)
                            if score > top { (top, winner) = (score, c) }
                        }
                    case .int8:
                        var top = Int.min
                        for c in 0..<best where Int(Int8(bitPattern: bytes[base + c])) > top {
                            (top, winner) = (Int(Int8(bitPattern: bytes[base + c])), c)
                        }
                    default:
                        var top = Int.min
                        for c in 0..<best where Int(bytes[base + c]) > top { (top, winner) = (Int(bytes[base + c]), c) }
                    }
                    indices[i] = UInt8(winner)
                }
            }
        }
        return indices
    }

    /// The model's class map at the image's size, row by row: each image pixel takes the class
    /// of the output pixel its centre falls in (Pillow's `NEAREST` over the region the input
    /// came from; ``CategoryMask/unknown`` outside it).
    static func mask(_ small: [UInt8], width: Int, height: Int, transform: ImageTransform) -> CategoryMask {
        mask(small, width: width, height: height, transform: transform, size: transform.imageSize)
    }

    /// The model's class map on a grid of `size` laid over the whole image, row by row.
    ///
    /// Each grid pixel takes the class of the output pixel its centre falls in (at the image's
    /// size, ``mask(_:width:height:transform:)``). The whole image stretched to the input
    /// (DeepLab's way) at the output's size is the class map itself.
    static func mask(_ small: [UInt8], width: Int, height: Int, transform: ImageTransform, size: PixelSize)
        -> CategoryMask
    {
        let image = transform.imageSize
        let region = transform.region
        if size == PixelSize(width: width, height: height), region.x == 0, region.y == 0,
            region.width == Double(image.width), region.height == Double(image.height)
        {
            return CategoryMask(width: width, height: height, classIndices: small)
        }
        let (columns, rows) = mapping(width: width, height: height, transform: transform, size: size)
        var indices = [UInt8](repeating: CategoryMask.unknown, count: size.width * size.height)
        indices.withUnsafeMutableBufferPointer { mask in
            for y in 0..<size.height where rows[y] >= 0 {
                let source = rows[y] * width
                let target = y * size.width
                for x in 0..<size.width where columns[x] >= 0 { mask[target + x] = small[source + columns[x]] }
            }
        }
        return CategoryMask(width: size.width, height: size.height, classIndices: indices)
    }

    /// The output column and row (-1 outside the region the input came from) of each column
    /// and row of a grid of `size` laid over the image: Pillow's `NEAREST` (at the image's
    /// size, the very arithmetic of the image-size mask).
    private static func mapping(width: Int, height: Int, transform: ImageTransform, size: PixelSize) -> (
        columns: [Int], rows: [Int]
    ) {
        let image = transform.imageSize
        let region = transform.region
        let scaleX = Double(width) / region.width
        let scaleY = Double(height) / region.height
        // At the image's size the factors are exactly 1.
        let stepX = size.width == image.width ? scaleX : scaleX * Double(image.width) / Double(max(size.width, 1))
        let stepY = size.height == image.height ? scaleY : scaleY * Double(image.height) / Double(max(size.height, 1))
        let columns = CategoryMask.nearest(count: size.width, source: width, offset: -region.x * scaleX, scale: stepX)
        let rows = CategoryMask.nearest(count: size.height, source: height, offset: -region.y * scaleY, scale: stepY)
        return (columns, rows)
    }

    /// The image pixels of each class (256 counts, ``CategoryMask/unknown`` for those outside
    /// the input's region) the image-size mask would have, counted without making it: from how
    /// many image columns and rows each output column and row gets.
    static func classCounts(_ small: [UInt8], width: Int, height: Int, transform: ImageTransform) -> [Int] {
        let (columns, rows) = mapping(width: width, height: height, transform: transform, size: transform.imageSize)
        return CategoryMask.classCounts(of: small, width: width, height: height, columns: columns, rows: rows)
    }
}

extension ImageTask.Options {
    /// These options as an ``ImageSegmenter``'s (see ``taskOptions(_:)``).
    public var segmenterOptions: ImageSegmenter.Options { taskOptions() }
}
