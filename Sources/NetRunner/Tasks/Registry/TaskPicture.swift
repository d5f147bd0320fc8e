public import NetRunnerImage

/// An answer of a task as a picture rather than a results line, for a client whose `Accept`
/// names `image/png` first (``VisionTaskDefinition/picture(_:)``): a segmenter's category
/// mask.
public struct TaskPicture: Sendable {
    /// Its media type (`image/png`).
    public var mediaType: String
    /// The picture's bytes.
    public var data: [UInt8]
    /// The size of the image it answers for (the picture's own may differ: a mask at the
    /// model's resolution), which the server sends in `Image-Width` and `Image-Height`.
    public var imageSize: PixelSize

    /// A picture.
    ///
    /// - Parameters:
    ///   - mediaType: Its media type.
    ///   - data: Its bytes.
    ///   - imageSize: The size of the image it answers for.
    public init(mediaType: String, data: [UInt8], imageSize: PixelSize) {
        self.mediaType = mediaType
        self.data = data
        self.imageSize = imageSize
    }
}
