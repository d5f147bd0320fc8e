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
    /// The time each stage took; making the mask is the post-processing.
    public var timings: ResultTimings

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
        self.init(
            categoryMask: categoryMask, labels: labels,
            timings: ResultTimings(
                decoding: decodingMilliseconds, preprocessing: preprocessingMilliseconds,
                inference: inferenceMilliseconds, postprocessing: postprocessingMilliseconds))
    }

    /// Creates a result for a mask at the image's size, its areas counted from the mask.
    ///
    /// - Parameters:
    ///   - categoryMask: The mask, at the image's size.
    ///   - labels: The classes' labels, by index.
    ///   - timings: The time each stage took.
    public init(categoryMask: CategoryMask, labels: LabelMap?, timings: ResultTimings) {
        var counts = [Int](repeating: 0, count: 256)
        for index in categoryMask.classIndices { counts[Int(index)] += 1 }
        self.init(
            categoryMask: categoryMask, imageSize: PixelSize(width: categoryMask.width, height: categoryMask.height),
            areas: Self.areas(counts: counts, labels: labels), timings: timings)
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
        self.init(
            categoryMask: categoryMask, imageSize: imageSize, areas: areas,
            timings: ResultTimings(
                decoding: decodingMilliseconds, preprocessing: preprocessingMilliseconds,
                inference: inferenceMilliseconds, postprocessing: postprocessingMilliseconds))
    }

    /// Creates a result for a mask at any resolution, with its areas counted in the image's
    /// pixels.
    ///
    /// - Parameters:
    ///   - categoryMask: The mask, over the whole image.
    ///   - imageSize: The image's size.
    ///   - areas: Each class's area in the image's pixels, largest first.
    ///   - timings: The time each stage took.
    public init(categoryMask: CategoryMask, imageSize: PixelSize, areas: [SegmentationArea], timings: ResultTimings) {
        self.categoryMask = categoryMask
        self.imageSize = imageSize
        self.areas = areas
        self.timings = timings
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
