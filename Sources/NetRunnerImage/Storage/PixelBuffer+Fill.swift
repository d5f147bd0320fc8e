// Filling rectangles of an RGB pixel buffer.
//
// Invariants: every write is clipped to the buffer (the rectangle may lie partly or wholly
// outside it); the buffer is rgb24, 3 bytes per pixel, rows `bytesPerRow` apart.

extension PixelBuffer {
    /// Fills a rectangle with a colour, clipped to the image.
    ///
    ///     var image = try PixelBuffer(width: 64, height: 64, format: .rgb24)
    ///     image.fill(PixelRect(x: -4, y: 10, width: 20, height: 5), color: .white)
    ///
    /// - Parameters:
    ///   - rect: The rectangle; any part outside the image is ignored.
    ///   - color: The colour.
    /// - Precondition: The image is ``PixelFormat/rgb24``.
    /// - Complexity: O(the rectangle's area inside the image).
    public mutating func fill(_ rect: PixelRect, color: PixelColor) {
        precondition(format == .rgb24, "Drawing needs an rgb24 image.")
        let x0 = max(0, rect.x)
        let y0 = max(0, rect.y)
        let x1 = min(width, rect.x.addingReportingOverflow(rect.width).partialValue)
        let y1 = min(height, rect.y.addingReportingOverflow(rect.height).partialValue)
        guard x0 < x1, y0 < y1 else { return }
        let rowBytes = bytesPerRow
        withUnsafeMutableBytes { bytes in
            for y in y0..<y1 {
                var index = y * rowBytes + x0 * 3
                for _ in x0..<x1 {
                    bytes[index] = color.red
                    bytes[index + 1] = color.green
                    bytes[index + 2] = color.blue
                    index += 3
                }
            }
        }
    }
}
