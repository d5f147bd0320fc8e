public import FoundationEssentials
import NetRunnerSupport

/// Errors thrown while decoding, transforming and encoding images.
///
/// Decoding errors name their source: the file's path, or `image data` for bytes decoded with
/// ``ImageDecoder/decode(data:options:source:)``. Decoding never traps on hostile input: every
/// problem in a file is one of these values.
public enum ImageError: Error, Equatable, Hashable, Sendable, Codable {
    /// The file could not be read (it does not exist, is a folder, or is not readable).
    case unreadableFile(path: String, reason: String)
    /// The file or data holds no bytes.
    case emptyFile(source: String)
    /// The first bytes match no format NetRunnerImage reads; `looksLike` names the format they
    /// do match (`"a GIF image"`, `"an MP4 or QuickTime video"`), if one is recognised. The
    /// bytes themselves are never quoted: the file may be anything a link points at.
    case unsupportedFormat(source: String, looksLike: String?)
    /// The format is known but this variant of it is not decoded (for example BMPs with embedded JPEG data).
    case unsupportedVariant(source: String, format: ImageFormat, detail: String)
    /// The data ends before the image does.
    case truncated(source: String, format: ImageFormat)
    /// The data is not a valid image of its format; `reason` is the decoder's message.
    case corrupt(source: String, format: ImageFormat, reason: String)
    /// The header announces more pixels than ``DecodingOptions/maximumPixelCount`` allows.
    case tooManyPixels(source: String, width: Int, height: Int, limit: Int)
    /// The file is larger than ``DecodingOptions/maximumFileSize`` allows; nothing was read.
    case fileTooLarge(source: String, byteCount: Int, limit: Int)
    /// Memory for the pixels could not be allocated.
    case outOfMemory(byteCount: Int)
    /// A width or height is zero, negative or too large to address.
    case invalidSize(width: Int, height: Int)
    /// A crop or resize region has no pixel inside the image.
    case emptyRegion(region: PixelRect, width: Int, height: Int)
    /// Bytes given to a ``PixelBuffer`` initialiser are too few for its size and row stride.
    case bufferTooSmall(provided: Int, required: Int)
    /// The encoder rejected the pixels.
    case encodingFailed(format: ImageFormat, reason: String)
    /// Writing a file failed; no partial file was left at `path`.
    case writeFailed(path: String, reason: String)
    /// The decoder ran in a decoder process (``DecoderIsolation``) and crashed, ran out of
    /// time, or could not start there; the process that asked is unharmed.
    case decoderFailed(source: String, format: ImageFormat, reason: String)
}

extension ImageError: LocalizedError {
    /// A description of the error that names the file and what to do.
    public var errorDescription: String? {
        switch self {
        case .unreadableFile(let path, let reason):
            "Cannot read \(path): \(reason)."
        case .emptyFile(let source):
            "\(source) is empty (0 bytes); expected an image (\(ImageDecoder.decodedFormats))."
        case .unsupportedFormat(let source, let looksLike):
            "\(source) is not an image NetRunner decodes (\(ImageDecoder.decodedFormats))"
                + (looksLike.map { ": it looks like \($0); convert it to PNG or JPEG." }
                    ?? ": its first bytes match no image format.")
        case .unsupportedVariant(let source, let format, let detail):
            // "an AVIF", "a HEIF": AVIF is the one name said with a vowel first.
            "\(source) is \(format == .avif ? "an" : "a") \(format) image NetRunnerImage does not decode: \(detail). "
                + "Convert it to PNG or baseline JPEG."
        case .truncated(let source, let format):
            "\(source) is truncated: the \(format) data ends before the image does. Re-copy or re-export the file."
        case .corrupt(let source, let format, let reason):
            "\(source) is not a valid \(format) image: \(reason)."
        case .tooManyPixels(let source, let width, let height, let limit):
            "\(source) is \(width)x\(height) (\(Self.pixelCountText(width, height)) pixels), more than the limit of "
                + "\(limit) pixels; raise DecodingOptions.maximumPixelCount if the image is trusted."
        case .fileTooLarge(let source, let byteCount, let limit):
            "\(source) is \(byteCount) bytes, more than the limit of \(limit) bytes for an image file; "
                + "raise DecodingOptions.maximumFileSize if the file is trusted."
        case .outOfMemory(let byteCount):
            "Cannot allocate \(byteCount) bytes for pixels."
        case .invalidSize(let width, let height):
            "Invalid image size \(width)x\(height): width and height must be 1 or more."
        case .emptyRegion(let region, let width, let height):
            "The region \(region) has no pixel inside the \(width)x\(height) image."
        case .bufferTooSmall(let provided, let required):
            "The pixel bytes are too few: \(provided) given, \(required) required for the size and row stride."
        case .encodingFailed(let format, let reason):
            "Cannot encode the pixels as \(format): \(reason)."
        case .writeFailed(let path, let reason):
            "Cannot write \(path): \(reason). Nothing was written."
        case .decoderFailed(let source, let format, let reason):
            "\(source) was not decoded: the \(format) decoder \(reason)."
        }
    }
}

extension ImageError: CustomStringConvertible {
    /// The same text as ``errorDescription``.
    public var description: String { errorDescription ?? "Image error." }
}

extension ImageError {
    /// `width x height` in decimal, exact for any two `Int`s (header sizes can overflow `Int`).
    static func pixelCountText(_ width: Int, _ height: Int) -> String {
        let (product, overflow) = width.multipliedReportingOverflow(by: height)
        if !overflow { return String(product) }
        let (high, low) = width.magnitude.multipliedFullWidth(by: height.magnitude)
        let sign = (width < 0) != (height < 0) ? "-" : ""
        // high * 2^64 + low, printed through Double when it does not fit 64 bits.
        if high == 0 { return sign + String(low) }
        return sign + "about " + String(Double(high) * 18_446_744_073_709_551_616.0 + Double(low))
    }

    /// Runs a file operation, turning its ``FileError`` into the image error that says the same.
    static func mapping<T>(_ body: () throws(FileError) -> T) throws(ImageError) -> T {
        do {
            return try body()
        } catch {
            switch error {
            case .unreadable(let path, let reason): throw .unreadableFile(path: path, reason: reason)
            case .writeFailed(let path, let reason): throw .writeFailed(path: path, reason: reason)
            case .tooLarge(let path, let byteCount, let limit):
                throw .fileTooLarge(source: path, byteCount: byteCount, limit: limit)
            }
        }
    }
}
