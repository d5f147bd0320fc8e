public import NetRunnerImage

extension ImageTask.Kind {
    /// It turns an image into a vector of numbers, near for images that look alike
    /// (``ImageEmbedder``).
    public static let embedding = ImageTask.Kind("embedding")
}

/// What an ``ImageEmbedder`` answers for one image: its embedding, as MediaPipe's
/// `ImageEmbedderResult` holds one head's.
public struct EmbeddingResult: RegisteredTaskResult {
    /// ``ImageTask/Kind/embedding``.
    public static let kind = ImageTask.Kind.embedding

    /// The embedding as floats: the output dequantized, L2-normalised when the options ask
    /// (with ``ImageEmbedder/Options/quantize`` too: the bytes come beside them).
    public var embedding: [Float]
    /// The embedding as signed bytes (MediaPipe's `quantized_embedding`), when the options
    /// ask for it: each value times 128, rounded and clamped to -128...127.
    public var quantizedEmbedding: [Int8]?
    /// The output the embedding was read from (MediaPipe's `head_name`).
    public var headName: String
    /// The original image's width in pixels.
    public var imageWidth: Int
    /// The original image's height in pixels.
    public var imageHeight: Int
    /// The time each stage took (reading, normalising and quantizing the output is its
    /// post-processing).
    public var timings: ResultTimings

    /// Creates a result.
    ///
    /// - Parameters:
    ///   - embedding: The embedding as floats.
    ///   - quantizedEmbedding: The embedding as signed bytes, if quantized.
    ///   - headName: The output's name.
    ///   - imageSize: The original image's size.
    ///   - timings: The time each stage took.
    public init(
        embedding: [Float], quantizedEmbedding: [Int8]? = nil, headName: String = "", imageSize: PixelSize,
        timings: ResultTimings = ResultTimings()
    ) {
        self.embedding = embedding
        self.quantizedEmbedding = quantizedEmbedding
        self.headName = headName
        self.imageWidth = imageSize.width
        self.imageHeight = imageSize.height
        self.timings = timings
    }

    /// The embedding's Euclidean length.
    public var norm: Float {
        embedding.reduce(0) { $0 + $1 * $1 }.squareRoot()
    }
}
