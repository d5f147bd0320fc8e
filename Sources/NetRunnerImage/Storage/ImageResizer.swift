// ImageResizer: crop + resize in one pass, with reusable coefficient tables and scratch memory.
//
// Invariants: `intermediate` holds at least `intermediateBytes` bytes and `accumulator` at
// least `accumulatorCount` Int32 values (both PixelStorage, 64-byte aligned, freed with this
// object). The source region passed to the passes is clamped to the source image and
// non-empty, and the coefficient tables are built for exactly that region, so every read is
// inside the source; the destination is reshaped and made unique before it is written.

/// Resizes images, optionally from a sub-rectangle, reusing its weight tables and scratch
/// memory between calls.
///
/// Use one resizer per stream of same-sized frames: after the first frame, resizing into the
/// same destination allocates nothing (the weights are cached per geometry and the
/// destination's memory is reused when uniquely referenced).
///
///     let resizer = ImageResizer(method: .bilinear)
///     var input = try PixelBuffer(width: 224, height: 224, format: .rgb24)
///     for frame in frames {  // BGRA camera frames
///         try resizer.centerThumbnail(of: frame, into: &input)  // crop, resize, BGRA -> RGB
///     }
///
/// - Note: Not thread-safe: use one resizer per thread. It keeps no reference to the images.
public final class ImageResizer {
    /// The resampling filter.
    public let method: ResizeMethod

    private var horizontal: ResampleCoefficients?
    private var vertical: ResampleCoefficients?
    private var intermediate: PixelStorage?
    private var accumulator: PixelStorage?
    private var converted: PixelBuffer?

    /// Creates a resizer.
    ///
    /// - Parameter method: The resampling filter; Pillow-compatible ``ResizeMethod/bilinear``
    ///   by default.
    public init(method: ResizeMethod = .bilinear) {
        self.method = method
    }

    /// Resizes `region` of `source` to fill `destination`, converting to `destination`'s format.
    ///
    /// `destination`'s current size and format are the target. Equivalent to cropping `region`
    /// and then resizing (Pillow's `crop(...).resize(...)`), without the intermediate copy.
    ///
    /// - Parameters:
    ///   - source: The image to read.
    ///   - region: The part of `source` to resize, clamped to it; `nil` for all of it.
    ///   - destination: The buffer to overwrite.
    /// - Throws: ``ImageError/emptyRegion(region:width:height:)`` when `region` lies outside
    ///   `source`.
    /// - Complexity: O(source region area + destination area) per call.
    public func resize(
        _ source: PixelBuffer, from region: PixelRect? = nil, into destination: inout PixelBuffer
    ) throws(ImageError) {
        let rect = try source.clampedRegion(region ?? PixelRect(x: 0, y: 0, width: source.width, height: source.height))
        if destination.format == source.format {
            resample(source, rect, into: &destination)
            return
        }
        var scratch =
            converted
            ?? PixelBuffer.allocating(width: destination.width, height: destination.height, format: source.format)
        converted = nil
        scratch.reshapeOrTrap(width: destination.width, height: destination.height, format: source.format)
        resample(source, rect, into: &scratch)
        scratch.convert(into: &destination)
        converted = scratch
    }

    /// Resizes `region` of `source` to a new buffer.
    ///
    /// - Parameters:
    ///   - source: The image to read.
    ///   - region: The part of `source` to resize, clamped to it; `nil` for all of it.
    ///   - size: The size of the result.
    ///   - format: The format of the result; `nil` keeps `source`'s.
    /// - Returns: A new buffer with packed rows.
    /// - Throws: ``ImageError/invalidSize(width:height:)`` for a size under 1x1,
    ///   ``ImageError/emptyRegion(region:width:height:)`` when `region` lies outside `source`.
    /// - Complexity: O(source region area + `size` area).
    public func resize(
        _ source: PixelBuffer, from region: PixelRect? = nil, to size: PixelSize, format: PixelFormat? = nil
    ) throws(ImageError) -> PixelBuffer {
        var result = try PixelBuffer(width: size.width, height: size.height, format: format ?? source.format)
        try resize(source, from: region, into: &result)
        return result
    }

    /// The iOS examples' `centerThumbnail(ofSize:)` into an existing buffer: the largest
    /// centred square of `source`, resized to `destination`'s size and format.
    ///
    /// - Parameters:
    ///   - source: The image (for example a BGRA camera frame).
    ///   - destination: The buffer to overwrite; its size and format are the target.
    /// - Throws: Nothing in practice (the square is never empty); declared for symmetry with
    ///   ``resize(_:from:into:)``.
    /// - Complexity: O(source area + destination area).
    public func centerThumbnail(of source: PixelBuffer, into destination: inout PixelBuffer) throws(ImageError) {
        try resize(source, from: .centerSquare(in: source.size), into: &destination)
    }

    private func coefficients(
        _ cached: ResampleCoefficients?, origin: Int, length: Int, outputSize: Int
    ) -> ResampleCoefficients {
        let key = ResampleCoefficients.Key(method: method, origin: origin, length: length, outputSize: outputSize)
        if let cached, cached.key == key { return cached }
        return ResampleCoefficients(key)
    }

    private func scratch(_ existing: PixelStorage?, byteCount: Int) -> PixelStorage {
        if let existing, existing.capacity >= byteCount { return existing }
        guard let storage = PixelStorage(byteCount: byteCount) else {
            preconditionFailure("Out of memory for \(byteCount) bytes of resize scratch space.")
        }
        return storage
    }

    /// Resamples `rect` (clamped, non-empty) of `source` into `destination` of the same format.
    private func resample(_ source: PixelBuffer, _ rect: PixelRect, into destination: inout PixelBuffer) {
        let channels = source.format.bytesPerPixel
        let outWidth = destination.width
        let outHeight = destination.height
        let horizontal = coefficients(self.horizontal, origin: rect.x, length: rect.width, outputSize: outWidth)
        let vertical = coefficients(self.vertical, origin: rect.y, length: rect.height, outputSize: outHeight)
        self.horizontal = horizontal
        self.vertical = vertical
        destination.makeUnique()
        let input = UnsafeRawPointer(source.storage.base)
        let readableEnd = input + source.storage.capacity
        let output = destination.storage.base
        let rowBytes = outWidth * channels
        let needsHorizontal = !horizontal.isIdentity
        let needsVertical = !vertical.isIdentity
        switch (needsHorizontal, needsVertical) {
        case (true, true):
            let firstRow = vertical.firstSource
            let rowCount = vertical.endSource - firstRow
            let intermediate = scratch(self.intermediate, byteCount: rowCount * rowBytes)
            self.intermediate = intermediate
            horizontal.horizontalPass(
                source: input, sourceStride: source.bytesPerRow, firstRow: firstRow, rowCount: rowCount,
                channels: channels, destination: intermediate.base, destinationStride: rowBytes,
                readableEnd: readableEnd)
            verticalPass(
                vertical, source: intermediate.base, sourceStride: rowBytes, rowBase: firstRow, rowBytes: rowBytes,
                into: output, destinationStride: destination.bytesPerRow)
        case (true, false):
            horizontal.horizontalPass(
                source: input, sourceStride: source.bytesPerRow, firstRow: rect.y, rowCount: outHeight,
                channels: channels, destination: output, destinationStride: destination.bytesPerRow,
                readableEnd: readableEnd)
        case (false, true):
            verticalPass(
                vertical, source: input + rect.x * channels, sourceStride: source.bytesPerRow, rowBase: 0,
                rowBytes: rowBytes, into: output, destinationStride: destination.bytesPerRow)
        case (false, false):
            for row in 0..<outHeight {
                (output + row * destination.bytesPerRow).copyMemory(
                    from: input + (rect.y + row) * source.bytesPerRow + rect.x * channels, byteCount: rowBytes)
            }
        }
        withExtendedLifetime(source.storage) {}
    }

    private func verticalPass(
        _ vertical: ResampleCoefficients, source: UnsafeRawPointer, sourceStride: Int, rowBase: Int, rowBytes: Int,
        into destination: UnsafeMutableRawPointer, destinationStride: Int
    ) {
        let accumulator = scratch(self.accumulator, byteCount: rowBytes * MemoryLayout<Int32>.stride)
        self.accumulator = accumulator
        vertical.verticalPass(
            source: source, sourceStride: sourceStride, rowBase: rowBase, rowBytes: rowBytes,
            destination: destination, destinationStride: destinationStride,
            accumulator: accumulator.base.bindMemory(to: Int32.self, capacity: rowBytes))
    }
}
