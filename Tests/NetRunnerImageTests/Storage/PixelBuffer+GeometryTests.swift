import NetRunnerImage
import Testing

@Suite("Cropping and orientation")
struct PixelBufferGeometryTests {
    /// 3x2 grey image: 1 2 3 / 4 5 6.
    static func image() throws -> PixelBuffer {
        try PixelBuffer(width: 3, height: 2, format: .gray8, bytes: [1, 2, 3, 4, 5, 6])
    }

    @Test("Crops are clamped to the image; an empty one throws")
    func crop() throws {
        let image = try Self.image()
        #expect(try image.cropped(to: PixelRect(x: 1, y: 0, width: 2, height: 2)).packedBytes == [2, 3, 5, 6])
        #expect(try image.cropped(to: PixelRect(x: -5, y: 1, width: 7, height: 9)).packedBytes == [4, 5])
        let outside = PixelRect(x: 3, y: 0, width: 2, height: 2)
        #expect(throws: ImageError.emptyRegion(region: outside, width: 3, height: 2)) { try image.cropped(to: outside) }
        #expect(PixelRect(x: 0, y: 0, width: Int.max, height: 1).clamped(to: image.size).width == 3)
    }

    @Test("Each EXIF orientation maps the pixels as Pillow's transposes do", arguments: ImageOrientation.allCases)
    func orientation(value: ImageOrientation) throws {
        let expected: [ImageOrientation: (Int, Int, [UInt8])] = [
            .up: (3, 2, [1, 2, 3, 4, 5, 6]), .upMirrored: (3, 2, [3, 2, 1, 6, 5, 4]),
            .down: (3, 2, [6, 5, 4, 3, 2, 1]), .downMirrored: (3, 2, [4, 5, 6, 1, 2, 3]),
            .leftMirrored: (2, 3, [1, 4, 2, 5, 3, 6]), .right: (2, 3, [4, 1, 5, 2, 6, 3]),
            .rightMirrored: (2, 3, [6, 3, 5, 2, 4, 1]), .left: (2, 3, [3, 6, 2, 5, 1, 4]),
        ]
        let (width, height, bytes) = try #require(expected[value])
        for format in PixelFormat.allCases {
            let image = try Self.image().converted(to: format)
            let upright = image.applyingOrientation(value)
            #expect(
                upright
                    == (try PixelBuffer(width: width, height: height, format: .gray8, bytes: bytes)).converted(
                        to: format))
        }
        #expect(value.swapsDimensions == (value.rawValue >= 5))
    }

    @Test("The centre square rounds its offsets down")
    func centerSquare() {
        #expect(
            PixelRect.centerSquare(in: PixelSize(width: 451, height: 300))
                == PixelRect(x: 75, y: 0, width: 300, height: 300))
        #expect(
            PixelRect.centerSquare(in: PixelSize(width: 512, height: 601))
                == PixelRect(x: 0, y: 44, width: 512, height: 512))
    }
}
