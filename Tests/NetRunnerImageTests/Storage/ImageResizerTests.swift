import NetRunnerImage
import NetRunnerTestSupport
import Testing

@Suite("ImageResizer: methods, reuse and camera frames")
struct ImageResizerTests {
    @Test("A BGRA camera frame becomes the same RGB thumbnail as the RGB photo")
    func cameraFrame() throws {
        let photo = try PixelBuffer(contentsOf: Fixtures.path("Tests/Fixtures/Photos/test/grace_hopper.jpg"))
        let frame = photo.converted(to: .bgra32)
        let resizer = ImageResizer()
        var input = try PixelBuffer(width: 224, height: 224, format: .rgb24)
        try resizer.centerThumbnail(of: frame, into: &input)
        #expect(input == (try photo.centerThumbnail(ofSize: .square(224))))
    }

    @Test("Resizing again into the same destination allocates no new pixel memory")
    func reuse() throws {
        let frame = try PixelBuffer(
            contentsOf: Fixtures.path("Tests/Fixtures/Photos/test/eagle.jpg"), options: .init(pixelFormat: .bgra32))
        let resizer = ImageResizer()
        var input = try PixelBuffer(width: 224, height: 224, format: .rgb24)
        try resizer.centerThumbnail(of: frame, into: &input)
        let first = input
        let address = input.withUnsafeBytes { $0.baseAddress }
        _ = consume first
        for _ in 0..<3 { try resizer.centerThumbnail(of: frame, into: &input) }
        #expect(input.withUnsafeBytes { $0.baseAddress } == address)
    }

    @Test("Area averages covered pixels with fractional edges")
    func area() throws {
        let row = try PixelBuffer(width: 4, height: 1, format: .gray8, bytes: [0, 100, 200, 40])
        #expect(try row.resized(to: PixelSize(width: 2, height: 1), method: .area).packedBytes == [50, 120])
        // 3 -> 2: each output covers 1.5 source pixels: (0 + 0.5 * 90) / 1.5 = 30, (0.5 * 90 + 180) / 1.5 = 150.
        let three = try PixelBuffer(width: 3, height: 1, format: .gray8, bytes: [0, 90, 180])
        #expect(try three.resized(to: PixelSize(width: 2, height: 1), method: .area).packedBytes == [30, 150])
        let square = try PixelBuffer(width: 2, height: 2, format: .gray8, bytes: [0, 40, 80, 120])
        #expect(try square.resized(to: PixelSize(width: 1, height: 1), method: .area).packedBytes == [60])
    }

    @Test("Nearest picks the pixel under each output centre")
    func nearest() throws {
        let row = try PixelBuffer(width: 4, height: 1, format: .gray8, bytes: [0, 100, 200, 40])
        #expect(try row.resized(to: PixelSize(width: 2, height: 1), method: .nearest).packedBytes == [100, 40])
        #expect(
            try row.resized(to: PixelSize(width: 8, height: 1), method: .nearest).packedBytes == [
                0, 0, 100, 100, 200, 200, 40, 40,
            ])
    }

    @Test("Every method keeps a flat image flat and an identity resize exact", arguments: ResizeMethod.allCases)
    func invariants(method: ResizeMethod) throws {
        let flat = try PixelBuffer(
            width: 37, height: 23, format: .rgba32, bytes: [UInt8](repeating: 77, count: 37 * 23 * 4))
        for size in [
            PixelSize(width: 5, height: 7), PixelSize(width: 100, height: 3), PixelSize(width: 37, height: 60),
        ] {
            #expect(try flat.resized(to: size, method: method).packedBytes.allSatisfy { $0 == 77 }, "\(size)")
        }
        let pattern = try PixelBuffer(
            width: 9, height: 6, format: .rgb24, bytes: SyntheticImages.pattern(width: 9, height: 6))
        #expect(try pattern.resized(to: pattern.size, method: method) == pattern)
        let region = PixelRect(x: 2, y: 1, width: 5, height: 4)
        #expect(try pattern.resized(from: region, to: region.size, method: method) == (try pattern.cropped(to: region)))
    }

    @Test("Crop + resize in one pass equals crop then resize", arguments: ResizeMethod.allCases)
    func onePass(method: ResizeMethod) throws {
        let photo = try PixelBuffer(contentsOf: Fixtures.path("Tests/Fixtures/Photos/test/chelsea.png"))
        let region = PixelRect(x: 31, y: 17, width: 301, height: 203)
        let size = PixelSize(width: 97, height: 131)
        #expect(
            try photo.resized(from: region, to: size, method: method)
                == (try photo.cropped(to: region).resized(to: size, method: method)))
    }

    @Test("A region outside the image and an empty size throw")
    func errors() throws {
        let image = try PixelBuffer(width: 4, height: 4, format: .gray8)
        let outside = PixelRect(x: 10, y: 0, width: 2, height: 2)
        #expect(throws: ImageError.emptyRegion(region: outside, width: 4, height: 4)) {
            try image.resized(from: outside, to: .square(2))
        }
        #expect(throws: ImageError.invalidSize(width: 0, height: 2)) {
            try image.resized(to: PixelSize(width: 0, height: 2))
        }
    }
}
