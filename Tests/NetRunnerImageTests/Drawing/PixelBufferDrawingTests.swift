import NetRunnerImage
import Testing

@Suite("Drawing on pixel buffers")
struct PixelBufferDrawingTests {
    static let red = PixelColor(red: 255, green: 0, blue: 0)

    static func pixel(_ image: PixelBuffer, _ x: Int, _ y: Int) -> [UInt8] {
        let bytes = image.packedBytes
        let index = (y * image.width + x) * 3
        return Array(bytes[index..<index + 3])
    }

    @Test("A filled rectangle covers exactly its pixels")
    func fill() throws {
        var image = try PixelBuffer(width: 10, height: 8, format: .rgb24)
        image.fill(PixelRect(x: 2, y: 3, width: 4, height: 2), color: Self.red)
        var painted = 0
        for y in 0..<8 {
            for x in 0..<10 where Self.pixel(image, x, y) == [255, 0, 0] {
                painted += 1
                #expect((2..<6).contains(x) && (3..<5).contains(y), "pixel (\(x), \(y))")
            }
        }
        #expect(painted == 8)
    }

    @Test("Rectangles partly or wholly outside the image are clipped, never trap")
    func clipping() throws {
        var image = try PixelBuffer(width: 6, height: 6, format: .rgb24)
        image.fill(PixelRect(x: -3, y: -3, width: 5, height: 5), color: Self.red)
        image.fill(PixelRect(x: 100, y: 100, width: 5, height: 5), color: Self.red)
        image.fill(PixelRect(x: Int.max - 1, y: 0, width: Int.max, height: 2), color: Self.red)
        image.strokeRectangle(PixelRect(x: -10, y: -10, width: 40, height: 40), thickness: 3, color: Self.red)
        image.drawText("CLIPPED 100%", x: 4, y: 4, scale: 2, color: .white)
        #expect(Self.pixel(image, 0, 0) == [255, 0, 0])
        #expect(Self.pixel(image, 1, 1) == [255, 0, 0])
        #expect(Self.pixel(image, 5, 5) != [255, 0, 0] || Self.pixel(image, 5, 5) == [255, 255, 255])
    }

    @Test("An outline is drawn inside the rectangle's edges; text stays inside its measured size")
    func strokeAndText() throws {
        var image = try PixelBuffer(width: 40, height: 20, format: .rgb24)
        image.strokeRectangle(PixelRect(x: 1, y: 1, width: 10, height: 8), thickness: 1, color: Self.red)
        #expect(Self.pixel(image, 1, 1) == [255, 0, 0])
        #expect(Self.pixel(image, 10, 8) == [255, 0, 0])
        #expect(Self.pixel(image, 5, 5) == [0, 0, 0])
        #expect(Self.pixel(image, 11, 9) == [0, 0, 0])
        var text = try PixelBuffer(width: 40, height: 20, format: .rgb24)
        let size = PixelBuffer.textSize("A1", scale: 2)
        #expect(size == PixelSize(width: 24, height: 14))
        text.drawText("A1", x: 0, y: 0, scale: 2, color: .white)
        var inked = 0
        for y in 0..<20 {
            for x in 0..<40 where Self.pixel(text, x, y) == [255, 255, 255] {
                inked += 1
                #expect(x < size.width && y < size.height)
            }
        }
        #expect(inked > 20)
    }
}
