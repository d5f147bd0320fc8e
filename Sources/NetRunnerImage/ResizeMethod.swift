/// The filter ``ImageResizer`` and ``PixelBuffer/resized(to:method:)`` resample with.
///
/// All methods are separable (two passes, horizontal and vertical, with 8-bit rounding in
/// between) and use 22-bit fixed-point weights, like Pillow's `Image.resize`; the passes run in
/// Pillow 13's order: vertical first when the height shrinks by more than twice as many pixels
/// as the width, horizontal first otherwise.
public enum ResizeMethod: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Pillow's `Image.BILINEAR`: a triangle filter whose support grows with the shrink factor,
    /// so shrinking averages every covered pixel (antialiased) instead of sampling four.
    /// Matches Pillow 13 bit for bit on the committed photos.
    case bilinear
    /// A box filter by area: each output pixel is the average of the source pixels its
    /// footprint covers, weighted by the covered fraction at the edges (OpenCV's `INTER_AREA`
    /// when shrinking). When enlarging it repeats pixels, blending only at their borders.
    case area
    /// The source pixel under each output pixel's centre; no blending.
    case nearest

    /// The method's name, for example `bilinear`.
    public var description: String { rawValue }
}
