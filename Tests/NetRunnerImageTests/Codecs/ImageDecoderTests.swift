import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

@Suite("Decoding files: sniffing, reference pixels, errors and limits")
struct ImageDecoderTests {
    @Test("Every committed photo decodes to Pillow's size and pixels", arguments: ImageReference.shared.photos)
    func photoMatchesPillow(photo: ImageReference.Photo) throws {
        let path = Fixtures.path(photo.file)
        let natural = try ImageDecoder.decode(contentsOf: path)
        #expect(natural.format.rawValue == photo.format)
        #expect(natural.storedSize == PixelSize(width: photo.width, height: photo.height))
        #expect(natural.pixels.format == (photo.mode == "L" ? .gray8 : .rgb24))
        let rgb = try PixelBuffer(contentsOf: path, options: .init(pixelFormat: .rgb24))
        #expect(rgb.size == PixelSize(width: photo.width, height: photo.height))
        for sample in photo.samples {
            #expect(rgb.pixel(x: sample.x, y: sample.y).map(Int.init) == sample.value, "at \(sample.x), \(sample.y)")
        }
    }

    @Test("Each requested pixel format is decoded straight from the file", arguments: PixelFormat.allCases)
    func requestedFormats(format: PixelFormat) throws {
        for file in ["Tests/Fixtures/Photos/test/coffee.jpg", "Tests/Fixtures/Photos/test/chelsea.png"] {
            let rgb = try PixelBuffer(contentsOf: Fixtures.path(file), options: .init(pixelFormat: .rgb24))
            let direct = try PixelBuffer(contentsOf: Fixtures.path(file), options: .init(pixelFormat: format))
            #expect(direct.format == format)
            if format == .gray8 && file.hasSuffix(".jpg") {
                // libjpeg returns the stored Y channel; luma of the decoded RGB differs where RGB
                // was clipped to 0...255 (saturated colours) and by rounding elsewhere.
                let difference = ByteDifference(direct.packedBytes, rgb.converted(to: .gray8).packedBytes)
                #expect(difference.meanAbsolute < 0.5, "\(difference)")
                #expect(difference.withinOne >= 0.99, "\(difference)")
            } else {
                #expect(direct == rgb.converted(to: format))
            }
        }
    }

    @Test("Data and file decoding agree, and errors name `image data`")
    func dataSource() throws {
        let data = try Fixtures.data("Tests/Fixtures/Photos/test/eagle.jpg")
        #expect(
            try PixelBuffer(data: data)
                == PixelBuffer(contentsOf: Fixtures.path("Tests/Fixtures/Photos/test/eagle.jpg")))
        #expect(throws: ImageError.truncated(source: "image data", format: .jpeg)) {
            try PixelBuffer(data: data.prefix(data.count / 2))
        }
    }

    @Test("A missing file, an empty file and a folder are refused by name")
    func unreadable() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let empty = try folder.write(Data(), named: "empty.png")
        #expect(throws: ImageError.emptyFile(source: empty)) { try ImageDecoder.decode(contentsOf: empty) }
        let missing = folder.path("missing.jpg")
        #expect(throws: ImageError.unreadableFile(path: missing, reason: "No such file or directory")) {
            try ImageDecoder.decode(contentsOf: missing)
        }
        #expect(throws: ImageError.unreadableFile(path: folder.url.path, reason: "not a regular file (a folder)")) {
            try ImageDecoder.decode(contentsOf: folder.url.path)
        }
    }

    @Test("Unknown formats are named, MP4 as a video, and no byte of the file is quoted")
    func unsupportedFormat() throws {
        let pdf = Data("%PDF-1.7\n".utf8)
        let expected = ImageError.unsupportedFormat(source: "image data", looksLike: "a PDF document")
        #expect(throws: expected) { try ImageDecoder.decode(data: pdf) }
        #expect(expected.description.contains("not an image NetRunner decodes (JPEG, PNG, BMP, PNM, WebP"))
        let cases: [(bytes: [UInt8], guess: String?)] = [
            (Array("\0\0\0\u{18}ftypmp42\0\0\0\0".utf8), "an MP4 video"),
            (Array("\0\0\0\u{18}ftypisom\0\0\0\0".utf8), "an MP4 video"),
            (Array("\0\0\0\u{18}ftypqt  \0\0\0\0".utf8), "a QuickTime video"),
            (Array("RIFF\0\0\0\0AVI LIST".utf8), "a RIFF file (AVI or WAV)"),
            (Array("root:$6$secret:19000".utf8), nil),
        ]
        for (bytes, guess) in cases {
            let error = ImageError.unsupportedFormat(source: "image data", looksLike: guess)
            #expect(throws: error) { try ImageDecoder.decode(data: Data(bytes)) }
        }
        // A link to a secret is reported without any of its bytes.
        let message = ImageError.unsupportedFormat(source: "x.jpg", looksLike: nil).description
        #expect(
            message
                == "x.jpg is not an image NetRunner decodes (JPEG, PNG, BMP, PNM, WebP, GIF, TIFF, HEIC, AVIF): "
                + "its first bytes match no image format.")
        #expect(throws: ImageError.self) { try ImageDecoder.decode(data: Data([0x00])) }
    }

    @Test("The one list of decoded formats names every format sniffed, HEIF as HEIC, and the messages read it")
    func decodedFormats() {
        let names = ImageDecoder.decodedFormats.split(separator: ", ").map(String.init)
        #expect(names == ImageFormat.allCases.map { $0 == .heif ? "HEIC" : $0.rawValue })
        #expect(ImageError.emptyFile(source: "x").description.contains("(\(ImageDecoder.decodedFormats))"))
    }

    @Test("Huge sizes in JPEG, PNG, BMP and PNM headers are refused before allocation")
    func pixelLimit() throws {
        let clock = ContinuousClock()
        let start = clock.now
        let limit = DecodingOptions.defaultMaximumPixelCount
        #expect(throws: ImageError.tooManyPixels(source: "image data", width: 60_000, height: 60_000, limit: limit)) {
            try ImageDecoder.decode(data: Data(SyntheticImages.jpegHeader(width: 60_000, height: 60_000)))
        }
        #expect(throws: ImageError.tooManyPixels(source: "image data", width: 100_000, height: 100_000, limit: limit)) {
            try ImageDecoder.decode(data: Data(SyntheticImages.pngHeader(width: 100_000, height: 100_000)))
        }
        #expect(throws: ImageError.tooManyPixels(source: "image data", width: 100_000, height: 100_000, limit: limit)) {
            try ImageDecoder.decode(data: Data(SyntheticImages.bmp24Header(width: 100_000, height: 100_000)))
        }
        #expect(throws: ImageError.tooManyPixels(source: "image data", width: 100_000, height: 100_000, limit: limit)) {
            try ImageDecoder.decode(data: Data("P6 100000 100000 255\n".utf8))
        }
        // The limit is configurable, and applies to real photos too.
        let small = DecodingOptions(maximumPixelCount: 1000)
        #expect(throws: ImageError.tooManyPixels(source: "image data", width: 451, height: 300, limit: 1000)) {
            try ImageDecoder.decode(data: Fixtures.data("Tests/Fixtures/Photos/test/chelsea.png"), options: small)
        }
        #expect(clock.now - start < .seconds(5))
    }

    @Test("Error messages name the file and say what to do")
    func messages() {
        let errors: [ImageError] = [
            .unreadableFile(path: "a.jpg", reason: "No such file or directory"), .emptyFile(source: "a.jpg"),
            .unsupportedFormat(source: "a.jpg", looksLike: nil),
            .unsupportedVariant(source: "a.bmp", format: .bmp, detail: "RLE8 compression"),
            .truncated(source: "a.jpg", format: .jpeg), .corrupt(source: "a.jpg", format: .jpeg, reason: "bad"),
            .tooManyPixels(source: "a.jpg", width: 2, height: 3, limit: 1), .outOfMemory(byteCount: 5),
            .invalidSize(width: 0, height: 1),
            .emptyRegion(region: PixelRect(x: 9, y: 9, width: 1, height: 1), width: 2, height: 2),
            .bufferTooSmall(provided: 1, required: 2), .encodingFailed(format: .png, reason: "bad"),
            .writeFailed(path: "a.png", reason: "Permission denied"),
        ]
        for error in errors {
            #expect(error.description == error.errorDescription)
            #expect(!error.description.isEmpty)
        }
        #expect(ImageError.truncated(source: "a.jpg", format: .jpeg).description.contains("a.jpg"))
        #expect(
            ImageError.tooManyPixels(source: "a.jpg", width: 2, height: 3, limit: 1).description.contains(
                "maximumPixelCount"))
    }
}
