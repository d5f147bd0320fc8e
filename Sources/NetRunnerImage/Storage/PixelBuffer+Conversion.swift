// Channel reordering between pixel formats.
//
// Invariants: the row loops read `width * source.bytesPerPixel` bytes from each source row and
// write `width * destination.bytesPerPixel` bytes to each destination row, both inside their
// buffers by PixelBuffer's invariants; the destination is uniquely referenced (reshaped or
// made unique) before it is written.

/// The BT.601 luma of an RGB triple, as Pillow's `convert("L")` computes it:
/// `(19595 R + 38470 G + 7471 B + 32768) >> 16`.
@inline(__always)
func luma601(_ red: UInt8, _ green: UInt8, _ blue: UInt8) -> UInt8 {
    UInt8(truncatingIfNeeded: (UInt32(red) * 19595 + UInt32(green) * 38470 + UInt32(blue) * 7471 + 0x8000) >> 16)
}

extension PixelBuffer {
    /// The same image in another pixel format.
    ///
    /// Colour channels are reordered; dropping alpha discards it (no blending, as the iOS
    /// examples and Pillow's `convert("RGB")` do); adding alpha sets it to 255. Colour to
    /// ``PixelFormat/gray8`` uses ITU-R BT.601 luma with Pillow's integer weights, grey to
    /// colour copies the value to each channel.
    ///
    /// - Parameter format: The format of the result.
    /// - Returns: A new buffer with packed rows (`self` when `format` is already the format).
    /// - Complexity: O(`width * height`).
    public func converted(to format: PixelFormat) -> PixelBuffer {
        if format == self.format { return self }
        var result = PixelBuffer.allocating(width: width, height: height, format: format)
        convert(into: &result)
        return result
    }

    /// Writes this image into `destination` in `destination`'s pixel format, resizing
    /// `destination` to this image's size and reusing its memory when it is uniquely
    /// referenced and large enough (so a per-frame conversion allocates nothing after the
    /// first frame).
    ///
    /// - Parameter destination: The buffer to overwrite; its ``format`` chooses the conversion.
    /// - Complexity: O(`width * height`).
    public func convert(into destination: inout PixelBuffer) {
        destination.reshapeOrTrap(width: width, height: height, format: destination.format)
        destination.makeUnique()
        Self.convertPixels(
            from: storage.base, bytesPerRow: bytesPerRow, format: format,
            to: destination.storage.base, bytesPerRow: destination.bytesPerRow, format: destination.format,
            width: width, height: height)
        withExtendedLifetime(storage) {}
    }

    /// A new packed buffer, trapping only when memory is exhausted.
    static func allocating(width: Int, height: Int, format: PixelFormat) -> PixelBuffer {
        do {
            return try PixelBuffer(width: width, height: height, format: format)
        } catch {
            preconditionFailure("Cannot allocate a \(width)x\(height) \(format) PixelBuffer: \(error)")
        }
    }

    /// ``reshape(width:height:format:)`` for sizes already known to be valid.
    mutating func reshapeOrTrap(width: Int, height: Int, format: PixelFormat) {
        do {
            try reshape(width: width, height: height, format: format)
        } catch {
            preconditionFailure("Cannot allocate a \(width)x\(height) \(format) PixelBuffer: \(error)")
        }
    }

    /// Converts `height` rows of `width` pixels between any two formats.
    static func convertPixels(
        from source: UnsafeRawPointer, bytesPerRow sourceStride: Int, format sourceFormat: PixelFormat,
        to destination: UnsafeMutableRawPointer, bytesPerRow destinationStride: Int,
        format destinationFormat: PixelFormat,
        width: Int, height: Int
    ) {
        let inBytes = sourceFormat.bytesPerPixel
        let outBytes = destinationFormat.bytesPerPixel
        for y in 0..<height {
            let input = (source + y * sourceStride).assumingMemoryBound(to: UInt8.self)
            let output = (destination + y * destinationStride).assumingMemoryBound(to: UInt8.self)
            if sourceFormat == destinationFormat {
                output.update(from: input, count: width * inBytes)
                continue
            }
            switch (sourceFormat.redOffset, destinationFormat.redOffset) {
            case (nil, nil):
                output.update(from: input, count: width)
            case (nil, .some(let red)):
                let green = 1
                let blue = 2 - red
                let alpha = destinationFormat.alphaOffset
                for x in 0..<width {
                    let value = input[x]
                    let pixel = output + x * outBytes
                    pixel[red] = value
                    pixel[green] = value
                    pixel[blue] = value
                    if let alpha { pixel[alpha] = 255 }
                }
            case (.some(let red), nil):
                let blue = 2 - red
                for x in 0..<width {
                    let pixel = input + x * inBytes
                    output[x] = luma601(pixel[red], pixel[1], pixel[blue])
                }
            case (.some(let inRed), .some(let outRed)):
                let inBlue = 2 - inRed
                let outBlue = 2 - outRed
                switch (sourceFormat.alphaOffset, destinationFormat.alphaOffset) {
                case (.some(let inAlpha), .some(let outAlpha)):
                    for x in 0..<width {
                        let from = input + x * inBytes
                        let to = output + x * outBytes
                        to[outRed] = from[inRed]
                        to[1] = from[1]
                        to[outBlue] = from[inBlue]
                        to[outAlpha] = from[inAlpha]
                    }
                case (nil, .some(let outAlpha)):
                    for x in 0..<width {
                        let from = input + x * inBytes
                        let to = output + x * outBytes
                        to[outRed] = from[inRed]
                        to[1] = from[1]
                        to[outBlue] = from[inBlue]
                        to[outAlpha] = 255
                    }
                default:
                    for x in 0..<width {
                        let from = input + x * inBytes
                        let to = output + x * outBytes
                        to[outRed] = from[inRed]
                        to[1] = from[1]
                        to[outBlue] = from[inBlue]
                    }
                }
            }
        }
    }
}
