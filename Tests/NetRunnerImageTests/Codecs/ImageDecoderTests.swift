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

    // MARK: The table of formats (ImageFormat: issue 55, "A photo format is one table")

    /// A real photo in each format: the committed fixtures, and for BMP and PNM, of which none is
    /// committed, chelsea.png's pixels written as a 24-bit BMP and a binary PPM.
    static func photos() throws -> [ImageFormat: Data] {
        let chelsea = try PixelBuffer(
            contentsOf: Fixtures.path("Tests/Fixtures/Photos/test/chelsea.png"), options: .init(pixelFormat: .rgb24))
        let formats = "Tests/Fixtures/Formats/"
        return [
            .jpeg: try Fixtures.data("Tests/Fixtures/Photos/test/coffee.jpg"),
            .png: try Fixtures.data("Tests/Fixtures/Photos/test/chelsea.png"),
            .bmp: Data(SyntheticImages.bmp(width: chelsea.width, height: chelsea.height, rgb: chelsea.packedBytes)),
            .pnm: Data("P6\n\(chelsea.width) \(chelsea.height)\n255\n".utf8) + chelsea.packedBytes,
            .webp: try Fixtures.data(formats + "webp_lossy.webp"),
            .gif: try Fixtures.data(formats + "gif_palette.gif"),
            .tiff: try Fixtures.data(formats + "tiff_rgb_lzw.tif"),
            .heif: try Fixtures.data(formats + "heic_plain.heic"),
            .avif: try Fixtures.data(formats + "avif_plain.avif"),
        ]
    }

    @Test("Each format's magic bytes sniff a real photo of it back to it, and no other format's match")
    func tableMagicBytes() throws {
        let photos = try Self.photos()
        #expect(Set(photos.keys) == Set(ImageFormat.allCases))
        for (format, data) in photos {
            #expect(ImageFormat.sniff(data) == format, "\(format)")
            #expect(ImageFormat.allCases.filter { $0.matches(header: data) } == [format], "\(format)")
            #expect(try ImageDecoder.decode(data: data).format == format, "\(format)")
        }
        // The BMP and the PPM hold chelsea.png's pixels.
        let rgb = DecodingOptions(pixelFormat: .rgb24)
        let chelsea = try PixelBuffer(data: photos[.png] ?? Data(), options: rgb)
        #expect(try PixelBuffer(data: photos[.bmp] ?? Data(), options: rgb) == chelsea)
        #expect(try PixelBuffer(data: photos[.pnm] ?? Data(), options: rgb) == chelsea)
    }

    @Test("Every file extension names its format back, in either case, and none belongs to two formats")
    func tableExtensions() {
        var owners: [String: [ImageFormat]] = [:]
        for format in ImageFormat.allCases {
            #expect(!format.fileExtensions.isEmpty, "\(format)")
            for name in format.fileExtensions {
                owners[name, default: []].append(format)
                #expect(name == name.lowercased() && !name.contains("."), "\(name)")
                #expect(ImageFormat(fileExtension: name) == format, "\(name)")
                #expect(ImageFormat(fileExtension: name.uppercased()) == format, "\(name)")
            }
        }
        #expect(owners.filter { $0.value.count > 1 }.isEmpty, "\(owners)")
        #expect(ImageFormat.allFileExtensions == Set(owners.keys))
        #expect(ImageFormat.jpeg.fileExtensions == ["jpg", "jpeg"] && ImageFormat.heif.fileExtensions.first == "heic")
        for other in ["jxl", "jp2", "ico", "psd", "dng", "", "jpg.gz"] {
            #expect(ImageFormat(fileExtension: other) == nil, "\(other)")
        }
    }

    @Test("Each format's MIME type is the one IANA registers, and no MIME type names two formats")
    func tableMIMETypes() {
        let registered: [ImageFormat: String] = [
            .jpeg: "image/jpeg", .png: "image/png", .bmp: "image/bmp", .pnm: "image/x-portable-anymap",
            .webp: "image/webp", .gif: "image/gif", .tiff: "image/tiff", .heif: "image/heic", .avif: "image/avif",
        ]
        #expect(Set(registered.keys) == Set(ImageFormat.allCases))
        for format in ImageFormat.allCases {
            #expect(format.mimeType == registered[format], "\(format)")
        }
        let all = ImageFormat.allCases.flatMap { [$0.mimeType] + $0.otherMIMETypes }
        #expect(Set(all).count == all.count, "\(all)")
        #expect(all.allSatisfy { $0.hasPrefix("image/") && $0 == $0.lowercased() }, "\(all)")
        #expect(ImageFormat.heif.otherMIMETypes.contains("image/heif"))
    }

    @Test("The table says which formats decode in children, which browsers draw and which are written")
    func tableRoles() throws {
        #expect(ImageFormat.decodedInChildren == [.heif, .avif])
        #expect(DecoderIsolation.Configuration(children: 1).formats == ImageFormat.decodedInChildren)
        #expect(ImageFormat.allCases.filter { !$0.browserDraws } == [.pnm, .tiff, .heif])
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let pixels = try PixelBuffer(width: 4, height: 3, format: .rgb24, bytes: [UInt8](repeating: 90, count: 36))
        for format in ImageFormat.allCases {
            let path = folder.path("out." + (format.fileExtensions.first ?? "x"))
            let written = (try? pixels.write(to: path, format: format)) != nil
            #expect(written == format.isWritten, "\(format)")
            if written { #expect(try ImageDecoder.decode(contentsOf: path).format == format, "\(format)") }
        }
    }
}
