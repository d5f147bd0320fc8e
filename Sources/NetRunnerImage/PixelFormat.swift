/// The memory layout of one pixel in a ``PixelBuffer``: which 8-bit channels, in which order.
///
/// Every format stores 8 bits per channel, channels interleaved. ``bgra32`` is the layout of
/// camera frames (the iOS examples' `kCVPixelFormatType_32BGRA`); models usually want
/// ``rgb24``.
public enum PixelFormat: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// Blue, green, red, alpha: 4 bytes per pixel, the camera's format.
    case bgra32
    /// Red, green, blue, alpha: 4 bytes per pixel.
    case rgba32
    /// Red, green, blue: 3 bytes per pixel, the usual model input.
    case rgb24
    /// One luma byte per pixel.
    case gray8

    /// The number of bytes (and channels) per pixel: 4, 4, 3 or 1.
    public var bytesPerPixel: Int {
        switch self {
        case .bgra32, .rgba32: 4
        case .rgb24: 3
        case .gray8: 1
        }
    }

    /// The byte offset of red within a pixel, or `nil` for ``gray8``.
    public var redOffset: Int? {
        switch self {
        case .bgra32: 2
        case .rgba32, .rgb24: 0
        case .gray8: nil
        }
    }

    /// The byte offset of green within a pixel, or `nil` for ``gray8``.
    public var greenOffset: Int? { self == .gray8 ? nil : 1 }

    /// The byte offset of blue within a pixel, or `nil` for ``gray8``.
    public var blueOffset: Int? {
        switch self {
        case .bgra32: 0
        case .rgba32, .rgb24: 2
        case .gray8: nil
        }
    }

    /// The byte offset of alpha within a pixel, or `nil` when the format has no alpha.
    public var alphaOffset: Int? {
        switch self {
        case .bgra32, .rgba32: 3
        case .rgb24, .gray8: nil
        }
    }

    /// Whether the format has an alpha channel.
    public var hasAlpha: Bool { alphaOffset != nil }

    /// The format's name, for example `bgra32`.
    public var description: String { rawValue }
}
