// Drawing into RGB pixel buffers: filled and stroked rectangles, bitmap text.
//
// Invariants: every write is clipped to the buffer (coordinates may lie outside it); the
// buffer is rgb24, 3 bytes per pixel, rows `bytesPerRow` apart.

import NetRunnerImage

enum Canvas {
    typealias Rect = (x0: Int, y0: Int, x1: Int, y1: Int)

    /// Fills the pixels with x0 <= x < x1 and y0 <= y < y1, clipped to the image.
    static func fillRectangle(_ image: inout PixelBuffer, _ rect: Rect, color: Annotator.Color) {
        precondition(image.format == .rgb24, "Canvas draws on rgb24 images.")
        let x0 = max(0, rect.x0)
        let y0 = max(0, rect.y0)
        let x1 = min(image.width, rect.x1)
        let y1 = min(image.height, rect.y1)
        guard x0 < x1, y0 < y1 else { return }
        let rowBytes = image.bytesPerRow
        image.withUnsafeMutableBytes { bytes in
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

    /// Draws the outline of a rectangle, `thickness` pixels wide, inside its edges.
    static func strokeRectangle(_ image: inout PixelBuffer, _ rect: Rect, thickness: Int, color: Annotator.Color) {
        fillRectangle(&image, (rect.x0, rect.y0, rect.x1, rect.y0 + thickness), color: color)
        fillRectangle(&image, (rect.x0, rect.y1 - thickness, rect.x1, rect.y1), color: color)
        fillRectangle(&image, (rect.x0, rect.y0, rect.x0 + thickness, rect.y1), color: color)
        fillRectangle(&image, (rect.x1 - thickness, rect.y0, rect.x1, rect.y1), color: color)
    }

    /// Draws text with the bitmap font, each font pixel `scale` x `scale` image pixels.
    static func drawText(
        _ image: inout PixelBuffer, _ text: String, x: Int, y: Int, scale: Int, color: Annotator.Color
    ) {
        var left = x
        for character in text {
            let rows = BitmapFont.glyph(character)
            for (row, bits) in rows.enumerated() {
                for column in 0..<BitmapFont.width where bits & (0x10 >> UInt8(column)) != 0 {
                    let px = left + column * scale
                    let py = y + row * scale
                    fillRectangle(&image, (px, py, px + scale, py + scale), color: color)
                }
            }
            left += (BitmapFont.width + 1) * scale
        }
    }
}
