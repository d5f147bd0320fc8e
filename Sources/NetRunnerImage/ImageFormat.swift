/// The file formats NetRunnerImage reads.
public enum ImageFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// JPEG (JFIF/EXIF), decoded by libjpeg-turbo.
    case jpeg = "JPEG"
    /// PNG, decoded by libpng.
    case png = "PNG"
    /// Windows bitmap (uncompressed 1/4/8-bit palette, 24- and 32-bit).
    case bmp = "BMP"
    /// Netpbm graymap or pixmap (P2, P3, P5, P6).
    case pnm = "PNM"

    /// Recognises a format from the first bytes of a file.
    ///
    /// - Parameter header: The file's first bytes (8 are enough).
    /// - Returns: The format, or `nil` when the magic bytes match none.
    public static func sniff<Bytes: Collection<UInt8>>(_ header: Bytes) -> ImageFormat? {
        let bytes = Array(header.prefix(8))
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if bytes.starts(with: [0x42, 0x4D]) { return .bmp }
        if bytes.count >= 2, bytes[0] == 0x50, (0x31...0x37).contains(bytes[1]) { return .pnm }
        return nil
    }

    /// The format's usual name, for example `JPEG`.
    public var description: String { rawValue }
}
