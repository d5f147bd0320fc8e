public import NetRunnerImage

extension ImageTask.Kind {
    /// It labels every pixel with a class (``ImageSegmenter``).
    public static let segmentation = ImageTask.Kind("segmentation")
}

/// What an ``ImageSegmenter`` answers for one image: a class for every pixel of the image
/// (``categoryMask``, at the image's size or the model's) and the area each class covers.
public struct SegmentationResult: RegisteredTaskResult {
    /// ``ImageTask/Kind/segmentation``.
    public static let kind = ImageTask.Kind.segmentation

    /// The class of every pixel, over the whole image: at the original image's size
    /// (``CategoryMask/Resolution/image``, the default), or at the model's output resolution
    /// (``CategoryMask/Resolution/model``), each of its pixels then covering
    /// `imageSize.width / categoryMask.width` by `imageSize.height / categoryMask.height` of
    /// the image's.
    public var categoryMask: CategoryMask
    /// The original image's size.
    public var imageSize: PixelSize
    /// Each class found and its area in the image's pixels, largest first
    /// (``CategoryMask/unknown`` left out): the same counts whatever the mask's resolution.
    public var areas: [SegmentationArea]
    /// Milliseconds spent decoding the file.
    public var decodingMilliseconds: Double
    /// Milliseconds spent turning the image into the model's input.
    public var preprocessingMilliseconds: Double
    /// Milliseconds spent in the runtime.
    public var inferenceMilliseconds: Double
    /// Milliseconds spent making the mask.
    public var postprocessingMilliseconds: Double

    /// The four stage times as one value.
    public var timings: ResultTimings {
        ResultTimings(
            decoding: decodingMilliseconds, preprocessing: preprocessingMilliseconds, inference: inferenceMilliseconds,
            postprocessing: postprocessingMilliseconds)
    }

    /// Creates a result for a mask at the image's size, its areas counted from the mask.
    ///
    /// - Parameters:
    ///   - categoryMask: The mask, at the image's size.
    ///   - labels: The classes' labels, by index.
    ///   - decodingMilliseconds: Decoding time.
    ///   - preprocessingMilliseconds: Preprocessing time.
    ///   - inferenceMilliseconds: Inference time.
    ///   - postprocessingMilliseconds: Post-processing time.
    public init(
        categoryMask: CategoryMask, labels: LabelMap?, decodingMilliseconds: Double = 0,
        preprocessingMilliseconds: Double = 0, inferenceMilliseconds: Double = 0, postprocessingMilliseconds: Double = 0
    ) {
        var counts = [Int](repeating: 0, count: 256)
        for index in categoryMask.classIndices { counts[Int(index)] += 1 }
        self.init(
            categoryMask: categoryMask, imageSize: PixelSize(width: categoryMask.width, height: categoryMask.height),
            areas: Self.areas(counts: counts, labels: labels), decodingMilliseconds: decodingMilliseconds,
            preprocessingMilliseconds: preprocessingMilliseconds, inferenceMilliseconds: inferenceMilliseconds,
            postprocessingMilliseconds: postprocessingMilliseconds)
    }

    /// Creates a result for a mask at any resolution, with its areas counted in the image's
    /// pixels.
    ///
    /// - Parameters:
    ///   - categoryMask: The mask, over the whole image.
    ///   - imageSize: The image's size.
    ///   - areas: Each class's area in the image's pixels, largest first.
    ///   - decodingMilliseconds: Decoding time.
    ///   - preprocessingMilliseconds: Preprocessing time.
    ///   - inferenceMilliseconds: Inference time.
    ///   - postprocessingMilliseconds: Post-processing time.
    public init(
        categoryMask: CategoryMask, imageSize: PixelSize, areas: [SegmentationArea], decodingMilliseconds: Double = 0,
        preprocessingMilliseconds: Double = 0, inferenceMilliseconds: Double = 0, postprocessingMilliseconds: Double = 0
    ) {
        self.categoryMask = categoryMask
        self.imageSize = imageSize
        self.areas = areas
        self.decodingMilliseconds = decodingMilliseconds
        self.preprocessingMilliseconds = preprocessingMilliseconds
        self.inferenceMilliseconds = inferenceMilliseconds
        self.postprocessingMilliseconds = postprocessingMilliseconds
    }

    /// The areas of pixel counts by class index (``CategoryMask/unknown`` left out), largest
    /// first, the lower index first among equals.
    static func areas(counts: [Int], labels: LabelMap?) -> [SegmentationArea] {
        counts.indices.filter { counts[$0] > 0 && $0 != Int(CategoryMask.unknown) }
            .map { SegmentationArea(index: $0, label: labels?[$0], pixels: counts[$0]) }
            .sorted { ($0.pixels, -$0.index) > ($1.pixels, -$1.index) }
    }

    /// The share of the image a class covers, 0 to 1.
    ///
    /// - Parameter index: The class index.
    /// - Returns: Its pixels over the image's.
    public func fraction(of index: Int) -> Float {
        let total = imageSize.width * imageSize.height
        return Float(areas.first { $0.index == index }?.pixels ?? 0) / Float(max(total, 1))
    }
}
