extension PixelBuffer {
    /// The image resized to `size` (aspect ratio not preserved).
    ///
    /// For repeated resizing of same-sized frames, keep an ``ImageResizer`` instead: it caches
    /// the weights and can write into an existing buffer.
    ///
    /// - Parameters:
    ///   - size: The size of the result.
    ///   - method: The filter; ``ResizeMethod/bilinear`` matches Pillow's `Image.BILINEAR`.
    /// - Returns: A new buffer in the same format.
    /// - Throws: ``ImageError/invalidSize(width:height:)`` for a size under 1x1.
    /// - Complexity: O(`width * height` + `size.width * size.height`).
    public func resized(to size: PixelSize, method: ResizeMethod = .bilinear) throws(ImageError) -> PixelBuffer {
        try ImageResizer(method: method).resize(self, to: size)
    }

    /// The pixels inside `region` resized to `size`, in one pass (no intermediate crop).
    ///
    /// Equal to `try cropped(to: region).resized(to: size, method: method)`.
    ///
    /// - Parameters:
    ///   - region: The part of the image to keep, clamped to the image.
    ///   - size: The size of the result.
    ///   - method: The filter.
    /// - Returns: A new buffer in the same format.
    /// - Throws: ``ImageError/invalidSize(width:height:)`` for a size under 1x1,
    ///   ``ImageError/emptyRegion(region:width:height:)`` when `region` lies outside the image.
    /// - Complexity: O(region area + `size.width * size.height`).
    public func resized(
        from region: PixelRect, to size: PixelSize, method: ResizeMethod = .bilinear
    ) throws(ImageError) -> PixelBuffer {
        try ImageResizer(method: method).resize(self, from: region, to: size)
    }

    /// The iOS examples' `centerThumbnail(ofSize:)`: the largest centred square, resized to `size`.
    ///
    /// The square has side `min(width, height)` and its offsets are rounded down, as in
    /// `tools/models/photo_prep.py`; a non-square `size` stretches it, as the iOS helper does.
    /// With ``ResizeMethod/bilinear`` the result equals Pillow's
    /// `img.crop(square).resize(size, Image.BILINEAR)` to within 1 per channel (bit for bit on
    /// the committed test photos).
    ///
    /// - Parameters:
    ///   - size: The size of the result, for example `.square(224)`.
    ///   - method: The filter.
    /// - Returns: A new buffer in the same format.
    /// - Throws: ``ImageError/invalidSize(width:height:)`` for a size under 1x1.
    /// - Complexity: O(`width * height` + `size.width * size.height`).
    public func centerThumbnail(ofSize size: PixelSize, method: ResizeMethod = .bilinear) throws(ImageError)
        -> PixelBuffer
    {
        try resized(from: .centerSquare(in: self.size), to: size, method: method)
    }
}
