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
    private var turned: PixelBuffer?

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

    /// Resizes `region` of stored pixels to fill `destination` as if they had first been
    /// turned upright by `orientation`: the same bytes as `applyingOrientation` followed by
    /// ``resize(_:from:into:)``, without turning the full-size pixels.
    ///
    /// Each pass runs along the stored axis its upright axis lies on, in Pillow's order for the
    /// upright geometry, with the upright weights read backwards where that axis is flipped, so
    /// every output sample is the same integer sum. Only the model-sized result is
    /// turned, which saves copying a large photo through the cache column by column.
    ///
    /// - Parameters:
    ///   - source: The pixels as stored.
    ///   - region: The part of `source` to resize, in stored pixels, clamped to it; `nil` for
    ///     all of it.
    ///   - orientation: The orientation the pixels were stored with.
    ///   - destination: The buffer to overwrite, upright; its size and format are the target.
    /// - Throws: ``ImageError/emptyRegion(region:width:height:)`` when `region` lies outside
    ///   `source`.
    /// - Complexity: O(source region area + destination area) per call.
    public func resize(
        _ source: PixelBuffer, from region: PixelRect? = nil, orientation: ImageOrientation,
        into destination: inout PixelBuffer
    ) throws(ImageError) {
        guard orientation != .up else { return try resize(source, from: region, into: &destination) }
        let rect = try source.clampedRegion(region ?? PixelRect(x: 0, y: 0, width: source.width, height: source.height))
        let swaps = orientation.swapsDimensions
        if !swaps && destination.format == source.format {
            resample(source, rect, orientation: orientation, upright: destination.size, into: &destination)
            return
        }
        // The passes' result (transposed when the orientation swaps the axes), then upright.
        var result =
            turned
            ?? PixelBuffer.allocating(width: destination.height, height: destination.width, format: source.format)
        turned = nil
        result.reshapeOrTrap(
            width: swaps ? destination.height : destination.width,
            height: swaps ? destination.width : destination.height, format: source.format)
        resample(source, rect, orientation: orientation, upright: destination.size, into: &result)
        if swaps {
            var upright =
                converted
                ?? PixelBuffer.allocating(width: destination.width, height: destination.height, format: source.format)
            converted = nil
            result.orient(.leftMirrored, into: &upright)
            upright.convert(into: &destination)
            converted = upright
        } else {
            result.convert(into: &destination)
        }
        turned = result
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
        _ cached: ResampleCoefficients?, origin: Int, length: Int, outputSize: Int, mirrorLength: Int = 0
    ) -> ResampleCoefficients {
        let key = ResampleCoefficients.Key(
            method: method, origin: origin, length: length, outputSize: outputSize, mirrorLength: mirrorLength)
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
        let horizontal = coefficients(
            self.horizontal, origin: rect.x, length: rect.width, outputSize: destination.width)
        let vertical = coefficients(self.vertical, origin: rect.y, length: rect.height, outputSize: destination.height)
        self.horizontal = horizontal
        self.vertical = vertical
        runPasses(
            source, horizontal, vertical,
            verticalFirst: ResampleCoefficients.runsVerticalFirst(horizontal.key, vertical.key), into: &destination)
    }

    /// The two passes over `source`'s stored axes, into `destination` of the same format: the
    /// rows' pass (`horizontal`) then the columns' (`vertical`), or the other way round when
    /// `verticalFirst`, each skipped where its table is the identity, as Pillow skips it.
    ///
    /// The first pass computes only the rows (or columns) the second one reads; the order
    /// changes the bytes (the intermediate is rounded to 8 bits), the restriction does not.
    private func runPasses(
        _ source: PixelBuffer, _ horizontal: ResampleCoefficients, _ vertical: ResampleCoefficients,
        verticalFirst: Bool, into destination: inout PixelBuffer
    ) {
        let channels = source.format.bytesPerPixel
        let outWidth = destination.width
        let outHeight = destination.height
        // Where a pass is skipped its table is the identity, whose first source is its origin.
        let left = horizontal.firstSource
        let top = vertical.firstSource
        destination.makeUnique()
        let input = UnsafeRawPointer(source.storage.base)
        let readableEnd = input + source.storage.capacity
        let output = destination.storage.base
        let rowBytes = outWidth * channels
        let needsHorizontal = !horizontal.isIdentity
        let needsVertical = !vertical.isIdentity
        switch (needsHorizontal, needsVertical) {
        case (true, true) where verticalFirst:
            // Columns first, only those the rows' pass reads; then the rows of the intermediate.
            let firstColumn = horizontal.firstSource
            let columnBytes = (horizontal.endSource - firstColumn) * channels
            let intermediate = scratch(self.intermediate, byteCount: outHeight * columnBytes)
            self.intermediate = intermediate
            verticalPass(
                vertical, source: input + firstColumn * channels, sourceStride: source.bytesPerRow, rowBase: 0,
                rowBytes: columnBytes, into: intermediate.base, destinationStride: columnBytes)
            let base = UnsafeRawPointer(intermediate.base)
            horizontal.horizontalPass(
                source: base - firstColumn * channels, sourceStride: columnBytes, firstRow: 0, rowCount: outHeight,
                channels: channels, destination: output, destinationStride: destination.bytesPerRow,
                readableEnd: base + outHeight * columnBytes)
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
                source: input, sourceStride: source.bytesPerRow, firstRow: top, rowCount: outHeight,
                channels: channels, destination: output, destinationStride: destination.bytesPerRow,
                readableEnd: readableEnd)
        case (false, true):
            verticalPass(
                vertical, source: input + left * channels, sourceStride: source.bytesPerRow, rowBase: 0,
                rowBytes: rowBytes, into: output, destinationStride: destination.bytesPerRow)
        case (false, false):
            for row in 0..<outHeight {
                (output + row * destination.bytesPerRow).copyMemory(
                    from: input + (top + row) * source.bytesPerRow + left * channels, byteCount: rowBytes)
            }
        }
        withExtendedLifetime(source.storage) {}
    }

    /// The passes of ``resize(_:from:orientation:into:)``: `rect` (stored, clamped, non-empty)
    /// resampled to `upright` size into `result` (of `source`'s format; `upright` transposed
    /// when the orientation swaps the axes).
    private func resample(
        _ source: PixelBuffer, _ rect: PixelRect, orientation: ImageOrientation, upright: PixelSize,
        into result: inout PixelBuffer
    ) {
        let stored = source.size
        let swaps = orientation.swapsDimensions
        let uprightRect = orientation.uprightRect(forStored: rect, storedSize: stored)
        // Along which stored axis each upright axis runs, and whether backwards.
        let origin = orientation.stored(x: 0, y: 0, storedSize: stored)
        let alongX = orientation.stored(x: 1, y: 0, storedSize: stored)
        let alongY = orientation.stored(x: 0, y: 1, storedSize: stored)
        let xBackwards = swaps ? alongX.y < origin.y : alongX.x < origin.x
        let yBackwards = swaps ? alongY.x < origin.x : alongY.y < origin.y
        let xLength = swaps ? stored.height : stored.width
        let yLength = swaps ? stored.width : stored.height
        // Upright x's weights and upright y's, in stored indices.
        let first = coefficients(
            horizontal, origin: uprightRect.x, length: uprightRect.width, outputSize: upright.width,
            mirrorLength: xBackwards ? xLength : 0)
        let second = coefficients(
            vertical, origin: uprightRect.y, length: uprightRect.height, outputSize: upright.height,
            mirrorLength: yBackwards ? yLength : 0)
        horizontal = first
        vertical = second
        // Pillow's order is decided on the upright geometry.
        let uprightVerticalFirst = ResampleCoefficients.runsVerticalFirst(first.key, second.key)
        if swaps {
            // Upright x runs along stored y and upright y along stored x: the stored rows' pass
            // is upright y's, so Pillow's upright order is the other stored order.
            runPasses(source, second, first, verticalFirst: !uprightVerticalFirst, into: &result)
        } else {
            runPasses(source, first, second, verticalFirst: uprightVerticalFirst, into: &result)
        }
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
