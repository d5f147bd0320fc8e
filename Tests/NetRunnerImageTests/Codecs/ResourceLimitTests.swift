import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

/// Small hostile files that would cost a lot of memory or time: each is refused early with an
/// `ImageError` naming the file.
@Suite("Memory and work limits")
struct ResourceLimitTests {
    /// The process's peak resident memory so far, in bytes.
    static func peakResidentBytes() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss * 1024
    }

    @Test("A 3 GiB sparse file is refused from its size, before anything is read")
    func sparseFile() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("huge.jpg")
        let descriptor = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0o644)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        let size = 3 << 30
        #expect(ftruncate(descriptor, off_t(size)) == 0)
        let before = Self.peakResidentBytes()
        let expected = ImageError.fileTooLarge(
            source: path, byteCount: size, limit: DecodingOptions.defaultMaximumFileSize)
        #expect(throws: expected) { try ImageDecoder.decode(contentsOf: path) }
        #expect(Self.peakResidentBytes() - before < 256 << 20)
        #expect(DecodingOptions.defaultMaximumFileSize == 256 << 20)
        #expect(
            expected.description
                == "\(path) is 3221225472 bytes, more than the limit of 268435456 bytes for an image file; "
                + "raise DecodingOptions.maximumFileSize if the file is trusted.")
    }

    @Test("The file-size limit is configurable and applies to data in memory too")
    func configurableLimit() throws {
        let path = Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")
        let data = try Fixtures.data("Tests/Fixtures/Photos/test/coffee.jpg")
        var options = DecodingOptions()
        options.maximumFileSize = data.count - 1
        #expect(throws: ImageError.fileTooLarge(source: path, byteCount: data.count, limit: data.count - 1)) {
            try ImageDecoder.decode(contentsOf: path, options: options)
        }
        #expect(throws: ImageError.fileTooLarge(source: "image data", byteCount: data.count, limit: data.count - 1)) {
            try ImageDecoder.decode(data: data, options: options)
        }
        options.maximumFileSize = data.count
        #expect(try ImageDecoder.decode(contentsOf: path, options: options).pixels.width > 0)
    }

    /// A 1x1 grey PNG followed by an ancillary `chunk` header declaring 0x7FFFFFFF bytes and a
    /// few bytes of it: 141 bytes in all.
    static func chunkBomb(_ chunk: String) -> [UInt8] {
        let ihdr: [UInt8] = Array("IHDR".utf8) + SyntheticImages.be32(1) + SyntheticImages.be32(1) + [8, 0, 0, 0, 0]
        var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + SyntheticImages.be32(13) + ihdr
        bytes += SyntheticImages.be32(Int(SyntheticImages.crc32(ihdr)))
        bytes += SyntheticImages.be32(0x7FFF_FFFF) + Array(chunk.utf8) + Array("Comment\0".utf8)
        bytes += [UInt8](repeating: 0x41, count: 141 - bytes.count)
        return bytes
    }

    @Test(
        "A 141-byte PNG whose text chunk declares 2 GiB is refused without allocating it",
        arguments: ["tEXt", "zTXt", "iTXt"])
    func textChunkBomb(chunk: String) throws {
        let file = Self.chunkBomb(chunk)
        #expect(file.count == 141)
        let before = Self.peakResidentBytes()
        let start = ContinuousClock.now
        #expect(throws: ImageError.self) { try ImageDecoder.decode(data: Data(file)) }
        #expect(Self.peakResidentBytes() - before < 256 << 20)
        #expect(ContinuousClock.now - start < .seconds(2))
    }

    /// A progressive 8x8 greyscale JPEG: one DC scan, then `acScans` AC scans of the same band,
    /// each a few bytes (every block is an end-of-band).
    static func progressiveJPEG(acScans: Int) -> [UInt8] {
        let be16 = SyntheticImages.be16
        var bytes: [UInt8] = [0xFF, 0xD8]
        bytes += [0xFF, 0xDB] + be16(67) + [0] + [UInt8](repeating: 1, count: 64)
        bytes += [0xFF, 0xC2] + be16(11) + [8] + be16(8) + be16(8) + [1, 1, 0x11, 0]  // SOF2, 1 component
        bytes += [0xFF, 0xC4] + be16(20) + [0x00, 1] + [UInt8](repeating: 0, count: 15) + [0x00]  // DC: "0" = 0
        bytes += [0xFF, 0xC4] + be16(20) + [0x10, 1] + [UInt8](repeating: 0, count: 15) + [0x00]  // AC: "0" = EOB
        bytes += [0xFF, 0xDA] + be16(8) + [1, 1, 0x00, 0, 0, 0] + [0x7F]  // DC first scan
        for _ in 0..<acScans {
            bytes += [0xFF, 0xDA] + be16(8) + [1, 1, 0x00, 1, 63, 0] + [0x7F]  // AC first scan, band 1...63
        }
        return bytes + [0xFF, 0xD9]
    }

    @Test("A progressive JPEG with a few dozen scans decodes")
    func fewScans() throws {
        let image = try ImageDecoder.decode(data: Data(Self.progressiveJPEG(acScans: 40)))
        #expect(image.pixels.width == 8 && image.pixels.height == 8)
        #expect(image.pixels.packedBytes == [UInt8](repeating: 128, count: 64))
    }

    @Test("A progressive JPEG scan bomb (hundreds of scans) is refused, naming the file")
    func scanBomb() throws {
        let file = Self.progressiveJPEG(acScans: 300)
        #expect(file.count < 3500)
        let reason =
            "more than 100 scans (each scan is another pass over the image; encoders write at most a few dozen)"
        #expect(throws: ImageError.corrupt(source: "image data", format: .jpeg, reason: reason)) {
            try ImageDecoder.decode(data: Data(file))
        }
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = try folder.write(Data(file), named: "bomb.jpg")
        #expect(throws: ImageError.corrupt(source: path, format: .jpeg, reason: reason)) {
            try ImageDecoder.decode(contentsOf: path)
        }
    }
}
