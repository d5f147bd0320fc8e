/// How a stored image must be transformed to appear upright: the EXIF/TIFF `Orientation` tag.
///
/// The raw values are the tag's values 1...8 and the names those of Apple's
/// `CGImagePropertyOrientation`: the name says where the stored image's top row ends up.
public enum ImageOrientation: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
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
