import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

/// Corrupted and truncated copies of every format: each must decode or throw an ImageError,
/// never crash, hang or read out of bounds (run under ASan with
/// `swift test --sanitize=address` to check the last).
@Suite("Fuzzing the decoders with corrupted files")
struct DecoderFuzzTests {
    static let originals: [(String, [UInt8])] = {
        var files: [(String, [UInt8])] = []
        for path in [
            "Tests/Fixtures/Photos/test/coffee.jpg", "Tests/Fixtures/Photos/test/chelsea.png",
            "Tests/Fixtures/ImageReference/png_rgb8_interlaced.png",
            "Tests/Fixtures/ImageReference/png_palette8_trns.png",
            "Tests/Fixtures/ImageReference/orientation_6.jpg", "Tests/Fixtures/ImageReference/cmyk.jpg",
        ] {
            if let data = try? Fixtures.data(path) { files.append((path, [UInt8](data))) }
        }
        let rgb = SyntheticImages.pattern(width: 9, height: 7)
        files.append(("bmp24", SyntheticImages.bmp(width: 9, height: 7, rgb: rgb)))
        files.append(
            (
                "bmp4",
                SyntheticImages.bmp(
                    width: 9, height: 7, rgb: [], bitsPerPixel: 4, palette: (0..<16).map { [UInt8($0 * 16), 0, 0] },
                    indices: (0..<63).map { $0 % 16 })
            ))
        files.append(("p6", [UInt8]("P6 9 7 255\n".utf8) + rgb))
        files.append(("p3", [UInt8](("P3 3 2 255\n" + rgb.prefix(18).map(String.init).joined(separator: " ")).utf8)))
        files.append(("p5-16", [UInt8]("P5 4 2 65535\n".utf8) + [UInt8](repeating: 0x80, count: 16)))
        return files
    }()

    @Test("Several hundred corrupted variants decode or throw, never crash", arguments: 0..<8)
    func corrupted(batch: Int) throws {
        #expect(Self.originals.count == 11)
        var random = SeededGenerator(seed: 0x1AA6E + UInt64(batch))
        var outcomes = [0, 0]
        let options = DecodingOptions(maximumPixelCount: 4_000_000)
        for _ in 0..<60 {
            let (_, original) = Self.originals[Int.random(in: 0..<Self.originals.count, using: &random)]
            var bytes = original
            switch Int.random(in: 0..<4, using: &random) {
            case 0:
                bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &random)))
            case 1:
                for _ in 0..<Int.random(in: 1...16, using: &random) {
                    let position = Int.random(in: 0..<min(bytes.count, 600), using: &random)
                    bytes[position] = UInt8.random(in: 0...255, using: &random)
                }
            case 2:
                for _ in 0..<Int.random(in: 1...32, using: &random) {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= UInt8(
                        1 << Int.random(in: 0..<8, using: &random))
                }
            default:
                let start = Int.random(in: 0..<bytes.count, using: &random)
                let length = min(Int.random(in: 1...256, using: &random), bytes.count - start)
                bytes.replaceSubrange(start..<(start + length), with: [UInt8](repeating: 0xFF, count: length))
            }
            do {
                let image = try ImageDecoder.decode(data: Data(bytes), options: options)
                #expect(image.pixels.width > 0)
                outcomes[0] += 1
            } catch {
                outcomes[1] += 1
            }
        }
        #expect(outcomes[0] + outcomes[1] == 60)
    }
}
