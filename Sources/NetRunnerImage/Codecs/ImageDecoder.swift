// ImageDecoder: format sniffing, the pixel limit, and dispatch to the per-format decoders.
//
// Invariants: the decoders receive an UnsafeRawBufferPointer that is valid only inside
// `withBytes`, and never keep it; the C decoders are opened and closed within one call. The
// pixel limit is checked from each header before pixel memory is allocated.

internal import CImageCodecs
public import FoundationEssentials
import NetRunnerSupport
import Synchronization

/// Decodes image files of the formats ``decodedFormats`` names into ``PixelBuffer``s.
///
/// The format is recognised from the first bytes, never from the file name. Every problem in
/// the input is thrown as an ``ImageError`` naming the file; hostile input cannot crash the
/// process or make it allocate more than ``DecodingOptions/maximumPixelCount`` pixels or read
/// a file larger than ``DecodingOptions/maximumFileSize``. Size computations on header values
/// are checked arithmetic; libpng skips ancillary chunks unread, and libjpeg stops after 100
/// scans (a progressive "scan bomb" is otherwise hundreds of passes over the image). WebP,
/// GIF, TIFF and HEIF/AVIF go through Debian's libwebp, giflib, libtiff and libheif; each
/// header's size is checked before the library decodes a pixel, libheif refuses sides past the
/// limit itself, and libtiff's single allocations are capped.
///
///     let image = try ImageDecoder.decode(contentsOf: "photo.jpg", options: .init(pixelFormat: .rgb24))
///     let upright = image.orientation == .up  // the EXIF tag, already applied to image.pixels
public enum ImageDecoder {
    /// The formats decoded, as help, messages and documentation list them: JPEG, PNG, BMP,
    /// PNM, WebP, GIF, TIFF, HEIC (HEIF with HEVC, ``ImageFormat/heif``) and AVIF.
    ///
    /// The one list: the command line's help, ``ImageError``'s messages and the server's
    /// refusals read it.
    public static let decodedFormats = "JPEG, PNG, BMP, PNM, WebP, GIF, TIFF, HEIC, AVIF"

    /// The pool that decodes the formats it names out of process: this process's default,
    /// for decodes with no ``environment`` bound.
    ///
    /// `nil` (the default) decodes everything here. The command line's start sets it (HEIC and
    /// AVIF in child processes, see ``DecoderIsolation``); a server binds its own
    /// ``DecodingEnvironment`` around its work instead.
    public static var isolation: DecoderIsolation? {
        get { isolationSetting.withLock { $0 } }
        set { isolationSetting.withLock { $0 = newValue } }
    }
    private static let isolationSetting = Mutex<DecoderIsolation?>(nil)

    /// The budget large photos share while they decode: this process's default, for decodes
    /// with no ``environment`` bound.
    ///
    /// `nil` (the default) admits every photo at once; a server binds a budget in its
    /// ``DecodingEnvironment`` (see ``PixelBudget``). Photos handed to decoder processes are
    /// bounded by their children instead.
    public static var admission: PixelBudget? {
        get { admissionSetting.withLock { $0 } }
        set { admissionSetting.withLock { $0 = newValue } }
    }
    private static let admissionSetting = Mutex<PixelBudget?>(nil)

    /// Reads and decodes the image file at `path`.
    ///
    /// - Parameters:
    ///   - path: The file's path.
    ///   - options: How to decode.
    /// - Returns: The pixels and what the file said about them.
    /// - Throws: ``ImageError/unreadableFile(path:reason:)`` if the file cannot be read,
    ///   ``ImageError/fileTooLarge(source:byteCount:limit:)`` if it is larger than
    ///   ``DecodingOptions/maximumFileSize`` (nothing is read then), and any error of
    ///   ``decode(data:options:source:)`` with `source` set to `path`.
    public static func decode(contentsOf path: String, options: DecodingOptions = DecodingOptions()) throws(ImageError)
        -> DecodedImage
    {
        let data = try ImageError.mapping { () throws(FileError) in
            try FileIO.contents(of: path, maximumSize: options.maximumFileSize)
        }
        return try decode(data: data, options: options, source: path)
    }

    /// Decodes an image held in memory in a decoder process when the ``DecodingEnvironment``'s
    /// isolation (the bound ``environment``, else ``isolation``) takes its format,
    /// awaiting the child without holding the caller's thread (a server's worker thread stays
    /// free for other photos while a HEIC decodes or hangs); `nil` for any other format, or
    /// without isolation, which the caller decodes in process.
    ///
    /// - Parameters:
    ///   - data: The encoded image.
    ///   - options: How to decode.
    ///   - source: The name errors use for the data, `image data` by default.
    /// - Returns: The image, as ``decode(data:options:source:)`` returns it, or `nil`.
    /// - Throws: As ``decode(data:options:source:)``.
    public static func decodeInDecoderProcess(
        data: Data, options: DecodingOptions = DecodingOptions(), source: String = "image data"
    ) async throws(ImageError) -> DecodedImage? {
        guard let isolation = current.isolation, let format = ImageFormat.sniff(data.prefix(12)),
            isolation.configuration.formats.contains(format)
        else { return nil }
        guard data.count <= options.maximumFileSize else {
            throw .fileTooLarge(source: source, byteCount: data.count, limit: options.maximumFileSize)
        }
        return try await isolation.decode(data: data, format: format, options: options, source: source)
    }

    /// Decodes an image held in memory.
    ///
    /// - Parameters:
    ///   - data: The encoded image.
    ///   - options: How to decode.
    ///   - source: The name errors use for the data, `image data` by default.
    /// - Returns: The pixels and what the file said about them.
    /// - Throws: ``ImageError/emptyFile(source:)``, ``ImageError/unsupportedFormat(source:looksLike:)``,
    ///   ``ImageError/unsupportedVariant(source:format:detail:)``, ``ImageError/truncated(source:format:)``,
    ///   ``ImageError/corrupt(source:format:reason:)``,
    ///   ``ImageError/tooManyPixels(source:width:height:limit:)``,
    ///   ``ImageError/fileTooLarge(source:byteCount:limit:)`` or ``ImageError/outOfMemory(byteCount:)``.
    public static func decode(data: Data, options: DecodingOptions = DecodingOptions(), source: String = "image data")
        throws(ImageError) -> DecodedImage
    {
        guard !data.isEmpty else { throw .emptyFile(source: source) }
        guard data.count <= options.maximumFileSize else {
            throw .fileTooLarge(source: source, byteCount: data.count, limit: options.maximumFileSize)
        }
        guard let format = ImageFormat.sniff(data.prefix(12)) else {
            throw .unsupportedFormat(source: source, looksLike: formatGuess(data.prefix(12)))
        }
        let environment = current
        if let isolation = environment.isolation, isolation.configuration.formats.contains(format) {
            return try isolation.decode(data: data, format: format, options: options, source: source)
        }
        let context = DecodeContext(source: source, format: format, options: options)
        context.admitted.budget = environment.admission
        defer { context.admitted.end() }
        var image = try withBytes(data) { (bytes) throws(ImageError) -> DecodedImage in
            switch format {
            case .jpeg: try JPEGDecoder.decode(bytes, context)
            case .png: try PNGDecoder.decode(bytes, context)
            case .bmp: try BMPDecoder.decode(bytes, context)
            case .pnm: try PNMDecoder.decode(bytes, context)
            case .webp: try WebPDecoder.decode(bytes, context)
            case .gif: try GIFDecoder.decode(bytes, context)
            case .tiff: try TIFFDecoder.decode(bytes, context)
            case .heif, .avif: try HEIFDecoder.decode(bytes, context)
            }
        }
        if let wanted = options.pixelFormat, image.pixels.format != wanted {
            image.pixels = image.pixels.converted(to: wanted)
        }
        if options.appliesOrientation && options.defersOrientation && image.orientation != .up {
            image.isUpright = false
        } else if options.appliesOrientation && image.orientation != .up {
            let stored = image.fullSize
            image.pixels = image.pixels.applyingOrientation(image.orientation)
            image.region = image.orientation.uprightRect(forStored: image.region, storedSize: stored)
            if image.orientation.swapsDimensions {
                image.fullSize = PixelSize(width: stored.height, height: stored.width)
            }
        }
        return image
    }

    /// What the first bytes look like, for formats people try that are not decoded here.
    ///
    /// A decoded format is named from ``ImageFormat``'s table (its magic bytes), so this list
    /// holds only the others; the brands of `ftyp` files that are no HEIF or AVIF image are
    /// videos.
    ///
    /// - Parameter bytes: The file's first 12 bytes (or fewer).
    /// - Returns: The format's name with its article, or `nil`.
    static func formatGuess(_ bytes: Data) -> String? {
        let array = Array(bytes.prefix(12))
        func starts(_ text: String) -> Bool { array.starts(with: Array(text.utf8)) }
        if let format = ImageFormat.sniff(array) { return format.withArticle }
        if starts("RIFF") { return "a RIFF file (AVI or WAV)" }
        if let brand = ImageFormat.brand(array) { return brand == "qt  " ? "a QuickTime video" : "an MP4 video" }
        if array.starts(with: [0x1A, 0x45, 0xDF, 0xA3]) { return "a Matroska or WebM video" }
        if starts("%PDF") { return "a PDF document" }
        if array.starts(with: [0x00, 0x00, 0x01, 0x00]) { return "a Windows icon (ICO)" }
        if starts("8BPS") { return "a Photoshop document" }
        if array.starts(with: [0x50, 0x4B, 0x03, 0x04]) { return "a zip archive" }
        if array.count >= 8, Array(array[4..<8]) == Array("TFL3".utf8) { return "a TensorFlow Lite model" }
        return nil
    }

    /// Runs `body` over the bytes of `data` with typed errors.
    static func withBytes<Result>(
        _ data: Data, _ body: (UnsafeRawBufferPointer) throws(ImageError) -> Result
    ) throws(ImageError) -> Result {
        let outcome: Swift.Result<Result, ImageError> = data.withUnsafeBytes { raw in
            do throws(ImageError) {
                return .success(try body(raw))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }
}

/// What every format decoder needs to know about the call.
struct DecodeContext {
    let source: String
    let format: ImageFormat
    let options: DecodingOptions
    /// The pixels this decode holds of its environment's budget, given back when it ends.
    let admitted = Admission()

    /// A decode's share of the pixel budget: the most it has asked for, taken as it grows.
    final class Admission {
        var pixels = 0
        /// The budget of the decode's ``DecodingEnvironment``; `nil`: no budget.
        var budget: PixelBudget?

        /// Holds `pixels` of the budget, or what it holds if that is more.
        func hold(_ pixels: Int) {
            guard let budget else { return }
            guard pixels > self.pixels else { return }
            // What it holds is given back before it waits for the larger share: a decode never
            // waits while holding pixels, so two growing decodes cannot wait on each other.
            budget.release(self.pixels)
            self.pixels = 0
            self.pixels = budget.acquire(pixels)
        }

        /// Gives back what it holds.
        func end() {
            budget?.release(pixels)
            pixels = 0
        }
    }

    /// Throws ``ImageError/tooManyPixels(source:width:height:limit:)`` or
    /// ``ImageError/corrupt(source:format:reason:)`` for a header size that must not be allocated.
    func checkSize(width: Int, height: Int) throws(ImageError) {
        guard width > 0, height > 0 else {
            throw .corrupt(source: source, format: format, reason: "the header gives a size of \(width)x\(height)")
        }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels <= options.maximumPixelCount else {
            throw .tooManyPixels(source: source, width: width, height: height, limit: options.maximumPixelCount)
        }
        // Before any pixel work: a large photo waits for its share of the process's budget.
        admitted.hold(pixels)
    }

    /// `a * b` for sizes computed from header values, or a ``ImageError/corrupt(source:format:reason:)``
    /// naming the file when the product does not fit an `Int` (never a trap).
    func product(_ a: Int, _ b: Int, _ what: String) throws(ImageError) -> Int {
        let (value, overflow) = a.multipliedReportingOverflow(by: b)
        guard !overflow else {
            throw .corrupt(source: source, format: format, reason: "the \(what) (\(a) x \(b)) is too large")
        }
        return value
    }

    /// `a + b` for offsets computed from header values, or a ``ImageError/corrupt(source:format:reason:)``
    /// naming the file when the sum does not fit an `Int` (never a trap).
    func sum(_ a: Int, _ b: Int, _ what: String) throws(ImageError) -> Int {
        let (value, overflow) = a.addingReportingOverflow(b)
        guard !overflow else {
            throw .corrupt(source: source, format: format, reason: "the \(what) (\(a) + \(b)) is too large")
        }
        return value
    }

    /// The error for a C shim status.
    func error(status: Int32, message: String, byteCount: Int = 0) -> ImageError {
        switch Int(status) {
        case Int(NR_CODEC_TRUNCATED): return .truncated(source: source, format: format)
        case Int(NR_CODEC_UNSUPPORTED): return .unsupportedVariant(source: source, format: format, detail: message)
        case Int(NR_CODEC_NO_MEMORY): return .outOfMemory(byteCount: byteCount)
        default: return .corrupt(source: source, format: format, reason: message.isEmpty ? "undecodable data" : message)
        }
    }

    /// Allocates an image and has a codec's shim write its rows into it.
    ///
    /// - Parameters:
    ///   - width: The image width, already checked with ``checkSize(width:height:)``.
    ///   - height: The image height.
    ///   - format: The pixel format the shim was configured for.
    ///   - writesEveryByte: `true` when the shim writes every byte of every row on success
    ///     (the memory is then not zeroed first; on failure the buffer is dropped).
    ///   - decode: Calls the shim with the destination, its bytes per row and its capacity;
    ///     returns the shim's status.
    ///   - failure: The error for a failing status and the buffer's size.
    /// - Returns: The decoded pixels.
    /// - Throws: ``ImageError``, from `failure` or from allocating the buffer.
    func decodePixels(
        width: Int, height: Int, format: PixelFormat, writesEveryByte: Bool = false,
        _ decode: (_ destination: UnsafeMutablePointer<UInt8>, _ bytesPerRow: Int, _ capacity: Int) -> Int32,
        failure: (_ status: Int32, _ byteCount: Int) -> ImageError
    ) throws(ImageError) -> PixelBuffer {
        var pixels = try PixelBuffer(width: width, height: height, format: format, zeroed: !writesEveryByte)
        let bytesPerRow = pixels.bytesPerRow
        let status = pixels.withUnsafeMutableBytes { buffer in
            guard let destination = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
                return Int32(NR_CODEC_BAD_ARGUMENT)
            }
            return decode(destination, bytesPerRow, buffer.count)
        }
        guard status == NR_CODEC_OK else {
            throw failure(status, bytesPerRow.multipliedReportingOverflow(by: height).partialValue)
        }
        return pixels
    }

    /// The C layout for a pixel format.
    static func layout(_ format: PixelFormat) -> Int32 {
        switch format {
        case .gray8: Int32(NR_LAYOUT_GRAY)
        case .rgb24: Int32(NR_LAYOUT_RGB)
        case .rgba32: Int32(NR_LAYOUT_RGBA)
        case .bgra32: Int32(NR_LAYOUT_BGRA)
        }
    }
}
