import CImageCodecs
import Synchronization
import Testing

@testable import NetRunnerImage

/// The AVX2 loops of the resize (CImageCodecs/resample.c) against the portable Swift loops: the
/// same integer sums, so the same bytes, for every pixel format, shrinking and enlarging, from a
/// region and from the whole image, windows that end at the last byte of the buffer included.
@Suite("Vectorised resampling equals the portable loops", .serialized)
struct VectorResampleTests {
    static let cases: [(source: PixelSize, region: PixelRect?, output: PixelSize)] = [
        (PixelSize(width: 1001, height: 667), nil, .square(224)),
        // Portrait: the columns first (Pillow's order), windows ending at the intermediate's end.
        (PixelSize(width: 667, height: 1001), nil, .square(224)),
        (PixelSize(width: 1001, height: 667), PixelRect(x: 167, y: 0, width: 667, height: 667), .square(224)),
        (
            PixelSize(width: 333, height: 251), PixelRect(x: 41, y: 0, width: 251, height: 251),
            PixelSize(width: 40, height: 30)
        ),
        (PixelSize(width: 97, height: 131), nil, PixelSize(width: 300, height: 17)),
        (PixelSize(width: 31, height: 7), nil, PixelSize(width: 5, height: 64)),
        (PixelSize(width: 4000, height: 9), nil, PixelSize(width: 3, height: 9)),
    ]

    @Test("Same bytes with and without AVX2", arguments: [PixelFormat.gray8, .rgb24, .rgba32, .bgra32])
    func sameBytes(format: PixelFormat) throws {
        #expect(nr_resample_has_avx2() == 1, "this machine's CPU has AVX2: the vector loops must run here")
        var generator = SeededBytes(seed: 7)
        for (size, region, output) in Self.cases {
            let count = size.width * size.height * format.bytesPerPixel
            let source = try PixelBuffer(
                width: size.width, height: size.height, format: format, bytes: (0..<count).map { _ in generator.next() }
            )
            let resizer = ImageResizer()
            ResampleCoefficients.usesVectorLoops.store(true, ordering: .relaxed)
            let vector = try resizer.resize(source, from: region, to: output)
            ResampleCoefficients.usesVectorLoops.store(false, ordering: .relaxed)
            let portable = try ImageResizer().resize(source, from: region, to: output)
            ResampleCoefficients.usesVectorLoops.store(true, ordering: .relaxed)
            // The first differing byte, not the arrays: a diff of two large arrays takes minutes.
            let (a, b) = (vector.packedBytes, portable.packedBytes)
            let first = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }.map(\.offset)
            #expect(
                a.count == b.count && first == nil,
                "\(format) \(size) \(String(describing: region)) to \(output): first difference at byte \(String(describing: first))"
            )
        }
    }
}

/// A small deterministic byte generator (xorshift), so failures reproduce.
struct SeededBytes {
    var state: UInt64
    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }
    mutating func next() -> UInt8 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return UInt8(truncatingIfNeeded: state >> 24)
    }
}
