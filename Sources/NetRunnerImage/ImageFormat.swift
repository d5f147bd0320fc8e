/// The file formats NetRunnerImage reads, and the one table of what is known about each.
///
/// Each case's row (`row`, one `switch`) holds its magic-byte test, its file extensions, its
/// MIME types, whether browsers draw it, whether a server decodes it in a child process and
/// whether it is written here. Everything that needs one of these facts reads the row: the
/// sniffer (``sniff(_:)``), the folder lister (`ImageFiles`), ``DecoderIsolation``'s default
/// formats, the server's uploads, album answers and web page, and `detect --annotate`'s file
/// names. docs/architecture.md, "Adding a photo format", says what else a new format needs.
public enum ImageFormat: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// JPEG (JFIF/EXIF), decoded by libjpeg-turbo.
    case jpeg = "JPEG"
    /// PNG, decoded by libpng.
    case png = "PNG"
    /// Windows bitmap (uncompressed 1/4/8-bit palette, 24- and 32-bit).
    case bmp = "BMP"
    /// Netpbm graymap or pixmap (P2, P3, P5, P6).
    case pnm = "PNM"
    /// WebP (lossy, lossless, with alpha; the first frame of an animation), decoded by libwebp.
    case webp = "WebP"
    /// GIF (the first frame), decoded by giflib.
    case gif = "GIF"
    /// TIFF (8- and 16-bit grey, RGB and RGBA, the first directory), decoded by libtiff.
    case tiff = "TIFF"
    /// HEIF with HEVC (HEIC, what iPhones save), decoded by libheif and libde265.
    case heif = "HEIF"
    /// AVIF (HEIF with AV1), decoded by libheif and dav1d.
    case avif = "AVIF"

    /// One format's row of the table.
    struct Row: Sendable {
        /// Whether a file's first bytes (at most 12) are this format's magic bytes.
        let matches: @Sendable ([UInt8]) -> Bool
        /// The file extensions, lowercased, without the dot; the usual one first.
        let fileExtensions: [String]
        /// The MIME type IANA registers (the conventional one where it registers none).
        let mimeType: String
        /// Other MIME types senders label the format with.
        let otherMIMETypes: [String]
        /// Whether Chromium and Firefox draw the format in an `<img>`.
        let browserDraws: Bool
        /// Whether a server decodes it in a child process by default.
        let decodedInChild: Bool
        /// Whether `PixelBuffer.write(to:format:quality:)` writes it.
        let isWritten: Bool
    }

    /// The table, one row per format (a new case does not compile until it has its row).
    var row: Row {
        switch self {
        case .jpeg:
            Row(
                matches: { $0.starts(with: [0xFF, 0xD8, 0xFF]) }, fileExtensions: ["jpg", "jpeg"],
                mimeType: "image/jpeg", otherMIMETypes: ["image/jpg", "image/pjpeg"], browserDraws: true,
                decodedInChild: false, isWritten: true)
        case .png:
            Row(
                matches: { $0.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) }, fileExtensions: ["png"],
                mimeType: "image/png", otherMIMETypes: [], browserDraws: true, decodedInChild: false, isWritten: true)
        case .bmp:
            Row(
                matches: { $0.starts(with: Array("BM".utf8)) }, fileExtensions: ["bmp"], mimeType: "image/bmp",
                otherMIMETypes: ["image/x-bmp", "image/x-ms-bmp"], browserDraws: true, decodedInChild: false,
                isWritten: false)
        case .pnm:
            // P1 to P7: the plain and raw bitmaps, graymaps and pixmaps, and PAM.
            Row(
                matches: { $0.count >= 2 && $0[0] == UInt8(ascii: "P") && (0x31...0x37).contains($0[1]) },
                fileExtensions: ["ppm", "pgm", "pnm", "pbm"], mimeType: "image/x-portable-anymap",
                otherMIMETypes: ["image/x-portable-pixmap", "image/x-portable-graymap", "image/x-portable-bitmap"],
                browserDraws: false, decodedInChild: false, isWritten: false)
        case .webp:
            Row(
                matches: {
                    $0.count >= 12 && $0[..<4].elementsEqual("RIFF".utf8) && $0[8..<12].elementsEqual("WEBP".utf8)
                },
                fileExtensions: ["webp"], mimeType: "image/webp", otherMIMETypes: [], browserDraws: true,
                decodedInChild: false, isWritten: false)
        case .gif:
            Row(
                matches: { $0.starts(with: Array("GIF87a".utf8)) || $0.starts(with: Array("GIF89a".utf8)) },
                fileExtensions: ["gif"], mimeType: "image/gif", otherMIMETypes: [], browserDraws: true,
                decodedInChild: false, isWritten: false)
        case .tiff:
            Row(
                matches: { $0.starts(with: [0x49, 0x49, 0x2A, 0x00]) || $0.starts(with: [0x4D, 0x4D, 0x00, 0x2A]) },
                fileExtensions: ["tif", "tiff"], mimeType: "image/tiff", otherMIMETypes: [], browserDraws: false,
                decodedInChild: false, isWritten: false)
        case .heif:
            // `.hif` is what Fujifilm's cameras name their HEIF photos.
            Row(
                matches: { Self.brand($0).map(Self.heifBrands.contains) ?? false },
                fileExtensions: ["heic", "heif", "hif"], mimeType: "image/heic",
                otherMIMETypes: ["image/heif", "image/heic-sequence", "image/heif-sequence"], browserDraws: false,
                decodedInChild: true, isWritten: false)
        case .avif:
            Row(
                matches: { Self.brand($0).map(Self.avifBrands.contains) ?? false }, fileExtensions: ["avif"],
                mimeType: "image/avif", otherMIMETypes: [], browserDraws: true, decodedInChild: true,
                isWritten: false)
        }
    }

    /// Every row, made once.
    private static let rows: [ImageFormat: Row] = Dictionary(uniqueKeysWithValues: allCases.map { ($0, $0.row) })

    /// This format's row, made once.
    private var entry: Row { Self.rows[self] ?? row }

    /// The HEIF brands (ISO/IEC 23008-12) of still images and sequences whose primary image
    /// libheif decodes with HEVC.
    static let heifBrands: Set<String> = ["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1"]

    /// The AVIF brands of still images and sequences.
    static let avifBrands: Set<String> = ["avif", "avis"]

    /// The major brand of an ISO base media file (`ftyp` at byte 4), or `nil` for another file.
    ///
    /// - Parameter bytes: The file's first bytes (12 are enough).
    /// - Returns: The four characters of the brand.
    static func brand(_ bytes: [UInt8]) -> String? {
        guard bytes.count >= 12, bytes[4..<8].elementsEqual("ftyp".utf8) else { return nil }
        return String(decoding: bytes[8..<12], as: UTF8.self)
    }

    /// Recognises a format from the first bytes of a file.
    ///
    /// - Parameter header: The file's first bytes (12 are enough; HEIF and AVIF need all 12).
    /// - Returns: The format, or `nil` when the magic bytes match none.
    public static func sniff<Bytes: Collection<UInt8>>(_ header: Bytes) -> ImageFormat? {
        let bytes = Array(header.prefix(12))
        return allCases.first { $0.entry.matches(bytes) }
    }

    /// Whether a file's first bytes are this format's magic bytes.
    ///
    /// - Parameter header: The file's first bytes (12 are enough).
    /// - Returns: `true` when they are.
    public func matches<Bytes: Collection<UInt8>>(header: Bytes) -> Bool {
        entry.matches(Array(header.prefix(12)))
    }

    /// The file extensions of the format, lowercased and without the dot, the usual one first:
    /// `["jpg", "jpeg"]`.
    public var fileExtensions: [String] { entry.fileExtensions }

    /// The MIME type IANA registers for the format (`image/jpeg`, `image/heic`...;
    /// `image/x-portable-anymap` for PNM, which has none registered): the type of an album's photo
    /// sent as its file holds it.
    public var mimeType: String { entry.mimeType }

    /// Other MIME types senders label the format with (`image/jpg`, `image/heif`...), which an
    /// upload is accepted with too.
    public var otherMIMETypes: [String] { entry.otherMIMETypes }

    /// Whether Chromium and Firefox draw the format in an `<img>`; the server's web page shows a
    /// photo of a format they do not draw (HEIC, TIFF, PNM) as the server renders it.
    public var browserDraws: Bool { entry.browserDraws }

    /// Whether a server decodes the format in a child process by default (HEIC and AVIF:
    /// libheif, libde265 and dav1d, large C and C++ that take their sizes from the file); see
    /// ``DecoderIsolation/Configuration/formats``.
    public var decodedInChild: Bool { entry.decodedInChild }

    /// Whether ``PixelBuffer/write(to:format:quality:)`` writes the format (PNG and JPEG).
    public var isWritten: Bool { entry.isWritten }

    /// The format whose file extensions include `fileExtension`, whatever its case.
    ///
    /// - Parameter fileExtension: An extension without the dot, such as `JPG` or `heic`.
    public init?(fileExtension: String) {
        let lowercased = fileExtension.lowercased()
        guard let format = Self.allCases.first(where: { $0.fileExtensions.contains(lowercased) }) else { return nil }
        self = format
    }

    /// Every format's file extensions: those a folder walk takes.
    public static let allFileExtensions: Set<String> = Set(allCases.flatMap(\.fileExtensions))

    /// The formats a server decodes in child processes by default (``decodedInChild``).
    public static let decodedInChildren: Set<ImageFormat> = Set(allCases.filter(\.decodedInChild))

    /// The format's name with its article, as messages name a file: `a JPEG image`,
    /// `an AVIF image`.
    var withArticle: String { (rawValue.hasPrefix("A") ? "an " : "a ") + rawValue + " image" }

    /// The format's usual name, for example `JPEG`.
    public var description: String { rawValue }
}
