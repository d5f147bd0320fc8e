extension PixelBuffer {
    /// Draws a rectangle's outline, `thickness` pixels wide inside its edges, clipped to the
    /// image.
    ///
    /// - Parameters:
    ///   - rect: The rectangle.
    ///   - thickness: The line width in pixels.
    ///   - color: The colour.
    /// - Precondition: The image is ``PixelFormat/rgb24``.
    public mutating func strokeRectangle(_ rect: PixelRect, thickness: Int, color: PixelColor) {
        let t = max(1, thickness)
        fill(PixelRect(x: rect.x, y: rect.y, width: rect.width, height: t), color: color)
        fill(PixelRect(x: rect.x, y: rect.y + rect.height - t, width: rect.width, height: t), color: color)
        fill(PixelRect(x: rect.x, y: rect.y, width: t, height: rect.height), color: color)
        fill(PixelRect(x: rect.x + rect.width - t, y: rect.y, width: t, height: rect.height), color: color)
    }

    /// Draws text in a 5x7 bitmap font (capitals, digits, common punctuation; a hollow box for
    /// other characters), each font pixel `scale` x `scale` image pixels, clipped to the image.
    ///
    /// - Parameters:
    ///   - text: The text.
    ///   - x: The left edge of the first character.
    ///   - y: The top of the text.
    ///   - scale: The size of a font pixel (1 or more).
    ///   - color: The colour.
    /// - Precondition: The image is ``PixelFormat/rgb24``.
    public mutating func drawText(_ text: String, x: Int, y: Int, scale: Int, color: PixelColor) {
        let scale = max(1, scale)
        var left = x
        for character in text {
            for (row, bits) in BitmapFont.glyph(character).enumerated() {
                for column in 0..<BitmapFont.width where bits & (0x10 >> UInt8(column)) != 0 {
                    fill(
                        PixelRect(x: left + column * scale, y: y + row * scale, width: scale, height: scale),
                        color: color)
                }
            }
            left += (BitmapFont.width + 1) * scale
        }
    }

    /// The size text drawn by ``drawText(_:x:y:scale:color:)`` takes.
    ///
    /// - Parameters:
    ///   - text: The text.
    ///   - scale: The size of a font pixel.
    /// - Returns: Its width and height in pixels.
    public static func textSize(_ text: String, scale: Int) -> PixelSize {
        let scale = max(1, scale)
        return PixelSize(width: text.count * (BitmapFont.width + 1) * scale, height: BitmapFont.height * scale)
    }
}
