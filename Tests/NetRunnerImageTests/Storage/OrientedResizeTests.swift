import Synchronization
import Testing

@testable import NetRunnerImage

/// `resize(_:from:orientation:into:)` against turning the pixels first and resizing the upright
/// image: the same bytes for every orientation, filter, pixel format and region, shrinking and
/// enlarging, with the vector loops and the portable ones.
@Suite("Resizing stored pixels as if turned upright", .serialized)
struct OrientedResizeTests {
    /// (stored size, region in upright pixels or nil for all, output size)
    static let cases: [(PixelSize, PixelRect?, PixelSize)] = [
        (PixelSize(width: 201, height: 134), nil, .square(48)),
        (PixelSize(width: 134, height: 201), PixelRect(x: 33, y: 0, width: 134, height: 134), .square(48)),
        (
            PixelSize(width: 333, height: 251), PixelRect(x: 3, y: 40, width: 200, height: 151),
            PixelSize(width: 40, height: 30)
        ),
        (PixelSize(width: 97, height: 131), nil, PixelSize(width: 300, height: 17)),
        (PixelSize(width: 31, height: 7), nil, PixelSize(width: 5, height: 64)),
        (PixelSize(width: 9, height: 400), nil, PixelSize(width: 9, height: 3)),
        (PixelSize(width: 50, height: 40), nil, PixelSize(width: 40, height: 50)),
        // Upright portrait for the orientations that swap: Pillow's columns-first order.
        (PixelSize(width: 300, height: 120), nil, .square(48)),
    ]

    @Test(
        "Same bytes as turning first", arguments: [ResizeMethod.bilinear, .area, .nearest],
        [PixelFormat.gray8, .rgb24, .rgba32, .bgra32])
    func sameBytes(method: ResizeMethod, format: PixelFormat) throws {
        var generator = SeededBytes(seed: 11)
        for (size, uprightRegion, output) in Self.cases {
            let count = size.width * size.height * format.bytesPerPixel
            let stored = try PixelBuffer(
                width: size.width, height: size.height, format: format, bytes: (0..<count).map { _ in generator.next() }
            )
            for orientation in ImageOrientation.allCases {
                let upright = stored.applyingOrientation(orientation)
                let region = uprightRegion.map { $0.clamped(to: upright.size) }
                let storedRegion = region.map { orientation.storedRect(forUpright: $0, storedSize: size) }
                // The portable loops once per filter (they are VectorResampleTests' subject).
                for vector in format == .rgb24 ? [true, false] : [true] {
                    ResampleCoefficients.usesVectorLoops.store(vector, ordering: .relaxed)
                    defer { ResampleCoefficients.usesVectorLoops.store(true, ordering: .relaxed) }
                    let expected = try ImageResizer(method: method).resize(upright, from: region, to: output)
                    let resizer = ImageResizer(method: method)
                    // Twice through one resizer (its tables and scratch reused), into RGB too.
                    for target in [format, format, .rgb24] {
                        var result = try PixelBuffer(width: output.width, height: output.height, format: target)
                        try resizer.resize(stored, from: storedRegion, orientation: orientation, into: &result)
                        let want = target == format ? expected : expected.converted(to: target)
                        #expect(
                            result.packedBytes == want.packedBytes,
                            "\(method) \(format)->\(target) \(orientation) \(size) \(String(describing: region)) to \(output), vector \(vector)"
                        )
                    }
                }
            }
        }
    }
}
