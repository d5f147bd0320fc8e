public import FoundationEssentials

extension PixelBuffer {
    /// Decodes the image file at `path` (a format of ``ImageDecoder/decodedFormats``, recognised by content).
    ///
    /// - Parameters:
    ///   - path: The file's path.
    ///   - options: How to decode; see ``DecodingOptions``.
    /// - Throws: The errors of ``ImageDecoder/decode(contentsOf:options:)``.
    public init(contentsOf path: String, options: DecodingOptions = DecodingOptions()) throws(ImageError) {
        self = try ImageDecoder.decode(contentsOf: path, options: options).pixels
    }

    /// Decodes an image held in memory (a format of ``ImageDecoder/decodedFormats``, recognised by content).
    ///
    /// - Parameters:
    ///   - data: The encoded image.
    ///   - options: How to decode; see ``DecodingOptions``.
    /// - Throws: The errors of ``ImageDecoder/decode(data:options:source:)``; they name the
    ///   source `image data`.
    public init(data: Data, options: DecodingOptions = DecodingOptions()) throws(ImageError) {
        self = try ImageDecoder.decode(data: data, options: options).pixels
    }
}
