import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

@Suite("Encoding PNG and JPEG, and atomic writes")
struct PixelBufferEncodingTests {
    @Test("PNG round trips are exact in every format", arguments: PixelFormat.allCases)
    func pngRoundTrip(format: PixelFormat) throws {
        let photo = try PixelBuffer(contentsOf: Fixtures.path("Tests/Fixtures/Photos/test/chelsea.png")).converted(
            to: format)
        let decoded = try PixelBuffer(data: try photo.pngData(), options: .init(pixelFormat: format))
        #expect(decoded == photo)
    }

    @Test("JPEG quality 95 round trips stay close")
    func jpegRoundTrip() throws {
        let photo = try PixelBuffer(contentsOf: Fixtures.path("Tests/Fixtures/Photos/test/chelsea.png"))
        let data = try photo.jpegData(quality: 95)
        #expect(ImageFormat.sniff(data) == .jpeg)
        let decoded = try PixelBuffer(data: data)
        let difference = ByteDifference(decoded.packedBytes, photo.packedBytes)
        #expect(difference.meanAbsolute < 2, "\(difference)")
        #expect(try PixelBuffer(data: try photo.converted(to: .bgra32).jpegData(quality: 95)) == decoded)
        #expect(try PixelBuffer(data: try photo.converted(to: .gray8).jpegData()).format == .gray8)
    }

    @Test("Bad qualities and formats are refused")
    func refused() throws {
        let image = try PixelBuffer(width: 2, height: 2, format: .rgb24)
        #expect(throws: ImageError.encodingFailed(format: .jpeg, reason: "quality 0 is outside 1...100")) {
            try image.jpegData(quality: 0)
        }
        #expect(throws: ImageError.encodingFailed(format: .bmp, reason: "only PNG and JPEG can be written")) {
            try image.write(to: "/tmp/never.bmp", format: .bmp)
        }
    }

    @Test("Writing replaces the file atomically and leaves no temporary file")
    func atomicWrite() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("out.png")
        let first = try PixelBuffer(width: 3, height: 3, format: .rgb24)
        try first.write(to: path, format: .png)
        let second = try PixelBuffer(
            width: 5, height: 2, format: .rgba32, bytes: SyntheticImages.pattern(width: 5, height: 2, channels: 4))
        try second.write(to: path, format: .png)
        #expect(try PixelBuffer(contentsOf: path) == second)
        try second.write(to: folder.path("out.jpg"), format: .jpeg, quality: 80)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted() == ["out.jpg", "out.png"])
    }

    @Test("A write into a missing folder fails cleanly, naming the path")
    func writeFailure() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("missing/out.png")
        #expect(throws: ImageError.writeFailed(path: path, reason: "No such file or directory")) {
            try PixelBuffer(width: 1, height: 1, format: .gray8).write(to: path, format: .png)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).isEmpty)
    }
}
