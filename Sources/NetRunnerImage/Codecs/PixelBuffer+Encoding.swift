// PNG and JPEG encoding through the CImageCodecs shims, and atomic file output.
//
// Invariants: the shims read `height` rows of `bytesPerRow` from the buffer's storage, which
// holds them by PixelBuffer's invariants; the malloc'd output block is copied into Data and
// freed exactly once (defer), on success and on failure alike.

internal import CImageCodecs
public import FoundationEssentials
import NetRunnerSupport

extension PixelBuffer {
    /// The image encoded as an 8-bit PNG (grey, RGB or RGBA; BGRA is written as RGBA).
    ///
    /// - Returns: The PNG file's bytes.
    /// - Throws: ``ImageError/encodingFailed(format:reason:)`` if libpng fails.
    /// - Complexity: O(`width * height`).
    public func pngData() throws(ImageError) -> Data {
        try encode(.png) { pixels, layout, output, size, message in
            nr_png_encode(pixels, Int32(width), Int32(height), bytesPerRow, layout, output, size, message, 256)
        }
    }

    /// The image encoded as a baseline JPEG (4:2:0 chroma subsampling); alpha is dropped.
    ///
    /// - Parameter quality: The libjpeg quality, 1...100 (95 keeps round trips within a few levels).
    /// - Returns: The JPEG file's bytes.
    /// - Throws: ``ImageError/encodingFailed(format:reason:)`` for a quality outside 1...100 or
    ///   if libjpeg fails.
    /// - Complexity: O(`width * height`).
    public func jpegData(quality: Int = 90) throws(ImageError) -> Data {
        guard (1...100).contains(quality) else {
            throw .encodingFailed(format: .jpeg, reason: "quality \(quality) is outside 1...100")
        }
        return try encode(.jpeg) { pixels, layout, output, size, message in
            nr_jpeg_encode(
                pixels, Int32(width), Int32(height), bytesPerRow, layout, Int32(quality), output, size, message, 256)
        }
    }

    /// Encodes the image and writes it to `path` atomically: the bytes go to a temporary file in
    /// the same folder, which is then renamed over `path`, so `path` never holds a partial image.
    ///
    /// - Parameters:
    ///   - path: The file to create or replace.
    ///   - format: ``ImageFormat/png`` or ``ImageFormat/jpeg``.
    ///   - quality: The JPEG quality, 1...100 (ignored for PNG).
    /// - Throws: ``ImageError/encodingFailed(format:reason:)`` for another format or a failed
    ///   encoding, ``ImageError/writeFailed(path:reason:)`` if the file cannot be written.
    /// - Complexity: O(`width * height`).
    public func write(to path: String, format: ImageFormat, quality: Int = 90) throws(ImageError) {
        let data: Data
        switch format {
        case .png: data = try pngData()
        case .jpeg: data = try jpegData(quality: quality)
        case .bmp, .pnm, .webp, .gif, .tiff, .heif, .avif:
            throw .encodingFailed(format: format, reason: "only PNG and JPEG can be written")
        }
        try ImageError.mapping { () throws(FileError) in try FileIO.writeAtomically(data, to: path) }
    }

    private typealias Encoder = (
        UnsafePointer<UInt8>, Int32, UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, UnsafeMutablePointer<Int>,
        UnsafeMutablePointer<CChar>
    ) -> Int32

    private func encode(_ format: ImageFormat, _ encoder: Encoder) throws(ImageError) -> Data {
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        var message = [CChar](repeating: 0, count: 256)
        let layout = DecodeContext.layout(self.format)
        let status = message.withUnsafeMutableBufferPointer { text -> Int32 in
            guard let text = text.baseAddress else { return Int32(NR_CODEC_BAD_ARGUMENT) }
            return encoder(
                storage.base.assumingMemoryBound(to: UInt8.self), layout, &output, &size, text)
        }
        withExtendedLifetime(storage) {}
        defer { nr_codec_free(output) }
        guard status == NR_CODEC_OK, let output else {
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw .encodingFailed(format: format, reason: reason.isEmpty ? "error \(status)" : reason)
        }
        return Data(bytes: output, count: size)
    }
}
