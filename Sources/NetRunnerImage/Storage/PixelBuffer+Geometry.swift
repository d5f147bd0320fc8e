// Cropping and EXIF orientation: pixel copies between PixelBuffers.
//
// Invariants: crops read only rows and columns of the clamped, non-empty rectangle; the
// orientation copy writes pixel (x, y) of the source to
// `origin + x * stepX + y * stepY` of a destination whose size is the source's (swapped for
// orientations 5-8), and the eight (origin, stepX, stepY) triples below map the source's
// corners onto the destination's corners, so every write lands inside the destination.

extension PixelBuffer {
    /// The pixels inside `rect`, clamped to the image, as a new buffer.
    ///
    /// - Parameter rect: The region to keep; parts outside the image are ignored.
    /// - Returns: A buffer of the clamped region's size with packed rows.
    /// - Throws: ``ImageError/emptyRegion(region:width:height:)`` when no pixel of `rect` lies
    ///   inside the image.
    /// - Complexity: O(area of the clamped region).
    public func cropped(to rect: PixelRect) throws(ImageError) -> PixelBuffer {
        let region = try clampedRegion(rect)
        let result = try PixelBuffer(width: region.width, height: region.height, format: format)
        let bytes = format.bytesPerPixel
        for y in 0..<region.height {
            let from = storage.base + (region.y + y) * bytesPerRow + region.x * bytes
            (result.storage.base + y * result.bytesPerRow).copyMemory(from: from, byteCount: region.width * bytes)
        }
        withExtendedLifetime(storage) {}
        return result
    }

    /// `rect` clamped to the image, or ``ImageError/emptyRegion(region:width:height:)``.
    func clampedRegion(_ rect: PixelRect) throws(ImageError) -> PixelRect {
        let region = rect.clamped(to: size)
        guard !region.isEmpty else { throw .emptyRegion(region: rect, width: width, height: height) }
        return region
    }

    /// The upright image for pixels stored with the EXIF `orientation`: flips and rotations by
    /// multiples of 90 degrees, as Pillow's `ImageOps.exif_transpose` applies them.
    ///
    /// - Parameter orientation: The orientation the pixels were stored with.
    /// - Returns: `self` for ``ImageOrientation/up``, otherwise a new buffer (width and height
    ///   swapped for ``ImageOrientation/leftMirrored`` through ``ImageOrientation/left``).
    /// - Complexity: O(`width * height`).
    public func applyingOrientation(_ orientation: ImageOrientation) -> PixelBuffer {
        if orientation == .up { return self }
        var result = PixelBuffer.allocating(
            width: orientation.swapsDimensions ? height : width, height: orientation.swapsDimensions ? width : height,
            format: format)
        orient(orientation, into: &result)
        return result
    }

    /// Writes the upright image for `orientation` into `result`, reshaped to it (memory reused
    /// when `result` is uniquely referenced and large enough).
    func orient(_ orientation: ImageOrientation, into result: inout PixelBuffer) {
        result.reshapeOrTrap(
            width: orientation.swapsDimensions ? height : width, height: orientation.swapsDimensions ? width : height,
            format: format)
        result.makeUnique()
        let bytes = format.bytesPerPixel
        let row = result.bytesPerRow
        let (origin, stepX, stepY): (Int, Int, Int)
        switch orientation {
        case .up: (origin, stepX, stepY) = (0, bytes, row)
        case .upMirrored: (origin, stepX, stepY) = ((width - 1) * bytes, -bytes, row)
        case .down: (origin, stepX, stepY) = ((height - 1) * row + (width - 1) * bytes, -bytes, -row)
        case .downMirrored: (origin, stepX, stepY) = ((height - 1) * row, bytes, -row)
        case .leftMirrored: (origin, stepX, stepY) = (0, row, bytes)
        case .right: (origin, stepX, stepY) = ((height - 1) * bytes, row, -bytes)
        case .rightMirrored: (origin, stepX, stepY) = ((width - 1) * row + (height - 1) * bytes, -row, -bytes)
        case .left: (origin, stepX, stepY) = ((width - 1) * row, -row, bytes)
        }
        let destination = result.storage.base
        for y in 0..<height {
            let input = storage.base + y * bytesPerRow
            var offset = origin + y * stepY
            switch bytes {
            case 4:
                for x in 0..<width {
                    destination.storeBytes(
                        of: input.loadUnaligned(fromByteOffset: x * 4, as: UInt32.self), toByteOffset: offset,
                        as: UInt32.self)
                    offset += stepX
                }
            default:
                for x in 0..<width {
                    (destination + offset).copyMemory(from: input + x * bytes, byteCount: bytes)
                    offset += stepX
                }
            }
        }
        withExtendedLifetime(storage) {}
    }
}
