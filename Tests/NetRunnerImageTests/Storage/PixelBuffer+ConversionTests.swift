import NetRunnerImage
import Testing

@Suite("Channel order conversion")
struct PixelBufferConversionTests {
    static let bgra: [UInt8] = [10, 20, 30, 40, 255, 128, 0, 200]

    @Test("BGRA converts to RGBA, RGB and BT.601 grey, and back")
    func fromCamera() throws {
        let frame = try PixelBuffer(width: 2, height: 1, format: .bgra32, bytes: Self.bgra)
        #expect(frame.converted(to: .rgba32).packedBytes == [30, 20, 10, 40, 0, 128, 255, 200])
        #expect(frame.converted(to: .rgb24).packedBytes == [30, 20, 10, 0, 128, 255])
        // Pillow's L = (19595 R + 38470 G + 7471 B + 32768) >> 16.
        #expect(frame.converted(to: .gray8).packedBytes == [22, 104])  // Pillow gives [22, 104] too
        #expect(frame.converted(to: .rgba32).converted(to: .bgra32) == frame)
        #expect(frame.converted(to: .rgb24).converted(to: .bgra32).packedBytes == [10, 20, 30, 255, 255, 128, 0, 255])
        #expect(frame.converted(to: .bgra32) == frame)
    }

    @Test("Grey expands to every colour format with opaque alpha", arguments: [PixelFormat.rgb24, .rgba32, .bgra32])
    func fromGray(format: PixelFormat) throws {
        let gray = try PixelBuffer(width: 2, height: 1, format: .gray8, bytes: [7, 250])
        let color = gray.converted(to: format)
        #expect(color.pixel(x: 1, y: 0) == (format.hasAlpha ? [250, 250, 250, 255] : [250, 250, 250]))
        #expect(color.converted(to: .gray8) == gray)
    }

    @Test("Converting into an existing buffer reuses its memory")
    func intoExisting() throws {
        let frame = try PixelBuffer(width: 2, height: 1, format: .bgra32, bytes: Self.bgra)
        var destination = try PixelBuffer(width: 8, height: 8, format: .rgb24)
        let before = destination.withUnsafeBytes { $0.baseAddress }
        frame.convert(into: &destination)
        #expect(destination.size == PixelSize(width: 2, height: 1))
        #expect(destination.withUnsafeBytes { $0.baseAddress } == before)
        #expect(destination.packedBytes == [30, 20, 10, 0, 128, 255])
    }

    @Test("Channel offsets describe each format")
    func offsets() {
        #expect(PixelFormat.bgra32.redOffset == 2 && PixelFormat.bgra32.blueOffset == 0)
        #expect(PixelFormat.rgba32.alphaOffset == 3 && PixelFormat.rgb24.alphaOffset == nil)
        #expect(PixelFormat.gray8.greenOffset == nil && PixelFormat.gray8.bytesPerPixel == 1)
        #expect(PixelFormat.allCases.map(\.bytesPerPixel) == [4, 4, 3, 1])
    }
}
