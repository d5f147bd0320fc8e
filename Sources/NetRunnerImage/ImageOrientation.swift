/// How a stored image must be transformed to appear upright: the EXIF/TIFF `Orientation` tag.
///
/// The raw values are the tag's values 1...8 and the names those of Apple's
/// `CGImagePropertyOrientation`: the name says where the stored image's top row ends up.
public enum ImageOrientation: Int, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// 1: already upright.
    case up = 1
    /// 2: mirrored left to right.
    case upMirrored = 2
    /// 3: rotated 180 degrees.
    case down = 3
    /// 4: mirrored top to bottom.
    case downMirrored = 4
    /// 5: mirrored across the main diagonal (transposed).
    case leftMirrored = 5
    /// 6: must be rotated 90 degrees clockwise to be upright.
    case right = 6
    /// 7: mirrored across the anti-diagonal (transversed).
    case rightMirrored = 7
    /// 8: must be rotated 90 degrees counter-clockwise to be upright.
    case left = 8

    /// Whether making the image upright swaps its width and height (values 5 to 8).
    public var swapsDimensions: Bool { rawValue >= 5 }

    /// The case name and the EXIF value, for example `right (6)`.
    public var description: String {
        let name: String
        switch self {
        case .up: name = "up"
        case .upMirrored: name = "upMirrored"
        case .down: name = "down"
        case .downMirrored: name = "downMirrored"
        case .leftMirrored: name = "leftMirrored"
        case .right: name = "right"
        case .rightMirrored: name = "rightMirrored"
        case .left: name = "left"
        }
        return "\(name) (\(rawValue))"
    }
}

extension ImageOrientation {
    /// Where the pixel at `(x, y)` of the stored image lands in the upright one.
    ///
    /// - Parameters:
    ///   - x: The stored column.
    ///   - y: The stored row.
    ///   - storedSize: The stored image's size.
    /// - Returns: The upright column and row (what ``PixelBuffer/applyingOrientation(_:)`` does).
    func upright(x: Int, y: Int, storedSize: PixelSize) -> (x: Int, y: Int) {
        let (right, bottom) = (storedSize.width - 1, storedSize.height - 1)
        switch self {
        case .up: return (x, y)
        case .upMirrored: return (right - x, y)
        case .down: return (right - x, bottom - y)
        case .downMirrored: return (x, bottom - y)
        case .leftMirrored: return (y, x)
        case .right: return (bottom - y, x)
        case .rightMirrored: return (bottom - y, right - x)
        case .left: return (y, right - x)
        }
    }

    /// Where the pixel at `(x, y)` of the upright image comes from in the stored one.
    ///
    /// - Parameters:
    ///   - x: The upright column.
    ///   - y: The upright row.
    ///   - storedSize: The stored image's size.
    /// - Returns: The stored column and row.
    func stored(x: Int, y: Int, storedSize: PixelSize) -> (x: Int, y: Int) {
        let uprightSize =
            swapsDimensions ? PixelSize(width: storedSize.height, height: storedSize.width) : storedSize
        return inverse.upright(x: x, y: y, storedSize: uprightSize)
    }

    /// The orientation that undoes this one: the two quarter turns are each other's, the
    /// others their own.
    private var inverse: ImageOrientation {
        switch self {
        case .right: return .left
        case .left: return .right
        default: return self
        }
    }

    /// The stored image's rectangle that becomes `rect` of the upright image.
    ///
    /// - Parameters:
    ///   - rect: A non-empty rectangle of the upright image.
    ///   - storedSize: The stored image's size.
    /// - Returns: The rectangle in stored pixels.
    public func storedRect(forUpright rect: PixelRect, storedSize: PixelSize) -> PixelRect {
        let a = stored(x: rect.x, y: rect.y, storedSize: storedSize)
        let b = stored(x: rect.x + rect.width - 1, y: rect.y + rect.height - 1, storedSize: storedSize)
        return PixelRect(
            x: min(a.x, b.x), y: min(a.y, b.y), width: abs(a.x - b.x) + 1, height: abs(a.y - b.y) + 1)
    }

    /// The upright image's rectangle that `rect` of the stored image becomes.
    ///
    /// - Parameters:
    ///   - rect: A non-empty rectangle of the stored image.
    ///   - storedSize: The stored image's size.
    /// - Returns: The rectangle in upright pixels.
    public func uprightRect(forStored rect: PixelRect, storedSize: PixelSize) -> PixelRect {
        let a = upright(x: rect.x, y: rect.y, storedSize: storedSize)
        let b = upright(x: rect.x + rect.width - 1, y: rect.y + rect.height - 1, storedSize: storedSize)
        return PixelRect(
            x: min(a.x, b.x), y: min(a.y, b.y), width: abs(a.x - b.x) + 1, height: abs(a.y - b.y) + 1)
    }
}
