/// The file formats NetRunnerImage reads.
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

    /// The HEIF brands (ISO/IEC 23008-12) of still images and sequences whose primary image
    /// libheif decodes with HEVC.
    static let heifBrands: Set<String> = ["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1"]

    /// Recognises a format from the first bytes of a file.
    ///
    /// - Parameter header: The file's first bytes (12 are enough; HEIF and AVIF need all 12).
    /// - Returns: The format, or `nil` when the magic bytes match none.
    public static func sniff<Bytes: Collection<UInt8>>(_ header: Bytes) -> ImageFormat? {
        let bytes = Array(header.prefix(12))
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if bytes.starts(with: [0x42, 0x4D]) { return .bmp }
        if bytes.count >= 2, bytes[0] == 0x50, (0x31...0x37).contains(bytes[1]) { return .pnm }
        if bytes.starts(with: Array("GIF87a".utf8)) || bytes.starts(with: Array("GIF89a".utf8)) { return .gif }
        if bytes.starts(with: [0x49, 0x49, 0x2A, 0x00]) || bytes.starts(with: [0x4D, 0x4D, 0x00, 0x2A]) {
            return .tiff
        }
        if bytes.count >= 12, bytes.starts(with: Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WEBP".utf8) {
            return .webp
        }
        if bytes.count >= 12, Array(bytes[4..<8]) == Array("ftyp".utf8) {
            let brand = String(decoding: bytes[8..<12], as: UTF8.self)
            if brand == "avif" || brand == "avis" { return .avif }
            if heifBrands.contains(brand) { return .heif }
        }
        return nil
    }

    /// The format's usual name, for example `JPEG`.
    public var description: String { rawValue }
}
