public import FoundationEssentials
public import NetRunnerImage

/// An image handed to a vision task, in whatever state the caller has it.
///
///     let result = try classifier.classify(.file("cat.jpg"))
///     let frame = try detector.detect(.pixels(cameraFrame))
public enum ImageInput: Sendable {
    /// An image file (a format of ``ImageDecoder/decodedFormats``), decoded with the task's decoding options.
    case file(String)
    /// The bytes of an encoded image.
    case data(Data)
    /// Pixels in any format (a camera frame, for example); answers are in their coordinates.
    case pixels(PixelBuffer)
    /// An image the decoder returned, and how long decoding took (reported in the answer).
    case decoded(DecodedImage, decodeTime: Duration)
    /// An image already made into this model's input (by an ``ImagePrefetcher`` given the
    /// task's preprocessing), and how long decoding took.
    case prepared(PreparedImage, decodeTime: Duration)
}
