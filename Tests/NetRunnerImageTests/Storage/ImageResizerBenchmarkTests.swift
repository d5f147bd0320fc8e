import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

/// A measurement, not a test: prints decode + centre-crop-resize timings when
/// `NETRUNNER_IMAGE_BENCH=1` (run it on a release build:
/// `swift build -c release --build-tests --scratch-path .build-image` then
/// `NETRUNNER_IMAGE_BENCH=1 swift test -c release --scratch-path .build-image --skip-build --filter Benchmark`).
/// It asserts nothing about time.
@Suite(
    "Benchmark: decode and centre thumbnail",
    .enabled(if: ProcessInfo.processInfo.environment["NETRUNNER_IMAGE_BENCH"] != nil))
struct ImageResizerBenchmarkTests {
    static func median(_ repetitions: Int, _ body: () throws -> Void) rethrows -> Double {
        var times: [Double] = []
        let clock = ContinuousClock()
        for _ in 0..<repetitions {
            let start = clock.now
            try body()
            let elapsed = clock.now - start
            times.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1e3)
        }
        return times.sorted()[times.count / 2]
    }

    @Test("Decode + centre crop + bilinear 224x224 per photo, with and without DCT scaling")
    func measure() throws {
        var lines: [String] = []
        for photo in ImageReference.testPhotos {
            let data = try Fixtures.data(photo.file)
            let full = try Self.median(30) {
                _ = try PixelBuffer(data: data, options: .init(pixelFormat: .rgb24)).centerThumbnail(
                    ofSize: .square(224))
            }
            let scaled = try Self.median(30) {
                _ = try PixelBuffer(data: data, options: .init(pixelFormat: .rgb24, minimumSize: .square(224)))
                    .centerThumbnail(ofSize: .square(224))
            }
            let decodeOnly = try Self.median(30) {
                _ = try PixelBuffer(data: data, options: .init(pixelFormat: .rgb24))
            }
            lines.append(
                "\(photo.testDescription) \(photo.width)x\(photo.height): full \(String(format: "%.2f", full)) ms "
                    + "(decode \(String(format: "%.2f", decodeOnly))), DCT-scaled \(String(format: "%.2f", scaled)) ms")
        }
        // The camera path: BGRA 1920x1080 frame -> 224x224 RGB into a reused buffer.
        let photo = try PixelBuffer(contentsOf: Fixtures.path("Tests/Fixtures/Photos/calibration/retina.jpg"))
        let frame = try photo.resized(to: PixelSize(width: 1920, height: 1080)).converted(to: .bgra32)
        let resizer = ImageResizer()
        var input = try PixelBuffer(width: 224, height: 224, format: .rgb24)
        let camera = try Self.median(50) { try resizer.centerThumbnail(of: frame, into: &input) }
        lines.append("camera BGRA 1920x1080 -> RGB 224x224 (reused buffers): \(String(format: "%.2f", camera)) ms")
        print(lines.joined(separator: "\n"))
    }
}
