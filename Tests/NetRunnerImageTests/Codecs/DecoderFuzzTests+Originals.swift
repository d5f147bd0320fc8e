import Foundation
import NetRunnerImage
import NetRunnerTestSupport

/// The fuzzer's originals: real photos of each format (or, for the formats no photo is committed
/// in, a region of chelsea.png encoded here), with the positions of their headers' length, size
/// and offset fields.
extension DecoderFuzzTests {
    /// The JPEG segment lengths and the frame's size fields.
    static func jpegFields(_ bytes: [UInt8]) -> [Field] {
        var fields: [Field] = []
        var position = 2
        while position + 4 <= bytes.count, bytes[position] == 0xFF {
            let marker = bytes[position + 1]
            fields.append(Field(offset: position + 2, width: 2, bigEndian: true))
            if (0xC0...0xC3).contains(marker) {
                fields.append(Field(offset: position + 5, width: 2, bigEndian: true))
                fields.append(Field(offset: position + 7, width: 2, bigEndian: true))
            }
            if marker == 0xDA { break }
            position += 2 + (Int(bytes[position + 2]) << 8 | Int(bytes[position + 3]))
        }
        return fields
    }

    /// The PNG chunk lengths and the IHDR size.
    static func pngFields(_ bytes: [UInt8]) -> [Field] {
        var fields = [Field(offset: 16, width: 4, bigEndian: true), Field(offset: 20, width: 4, bigEndian: true)]
        var position = 8
        while position + 8 <= bytes.count {
            fields.append(Field(offset: position, width: 4, bigEndian: true))
            let length = bytes[position..<(position + 4)].reduce(0) { $0 << 8 | Int($1) }
            position += 12 + length
        }
        return fields
    }

    /// The BMP header's sizes and offsets (file size, pixel offset, header size, width, height,
    /// bits per pixel, compression, data size, colours used).
    static let bmpFields = [(2, 4), (10, 4), (14, 4), (18, 4), (22, 4), (28, 2), (30, 4), (34, 4), (46, 4)].map {
        Field(offset: $0.0, width: $0.1, bigEndian: false)
    }

    /// The GIF logical screen's size and the first image descriptor's position and size.
    static func gifFields(_ bytes: [UInt8]) -> [Field] {
        var fields = [Field(offset: 6, width: 2, bigEndian: false), Field(offset: 8, width: 2, bigEndian: false)]
        if let descriptor = bytes.indices.dropFirst(13).first(where: { bytes[$0] == 0x2C }) {
            fields += (0..<4).map { Field(offset: descriptor + 1 + 2 * $0, width: 2, bigEndian: false) }
        }
        return fields
    }

    /// The RIFF size and, for VP8L, nothing more (its size is bit-packed): the chunk sizes.
    static func webpFields(_ bytes: [UInt8]) -> [Field] {
        var fields = [Field(offset: 4, width: 4, bigEndian: false)]
        var position = 12
        while position + 8 <= bytes.count {
            fields.append(Field(offset: position + 4, width: 4, bigEndian: false))
            let size = bytes[(position + 4)..<(position + 8)].reversed().reduce(0) { $0 << 8 | Int($1) }
            position += 8 + size + (size & 1)
        }
        return fields
    }

    /// The first IFD's offset and its entries' counts and values (little-endian TIFFs).
    static func tiffFields(_ bytes: [UInt8]) -> [Field] {
        guard bytes.count > 8, bytes[0] == 0x49 else { return [] }
        var fields = [Field(offset: 4, width: 4, bigEndian: false)]
        let ifd = bytes[4..<8].reversed().reduce(0) { $0 << 8 | Int($1) }
        guard ifd + 2 <= bytes.count else { return fields }
        let entries = Int(bytes[ifd]) | Int(bytes[ifd + 1]) << 8
        for entry in 0..<entries where ifd + 2 + 12 * entry + 12 <= bytes.count {
            fields.append(Field(offset: ifd + 2 + 12 * entry + 4, width: 4, bigEndian: false))
            fields.append(Field(offset: ifd + 2 + 12 * entry + 8, width: 4, bigEndian: false))
        }
        return fields
    }

    /// The ISO BMFF box sizes of the top level and of `meta` (HEIF, AVIF), and the `ispe` size.
    static func heifFields(_ bytes: [UInt8]) -> [Field] {
        var fields: [Field] = []
        func boxes(from start: Int, to end: Int, depth: Int) {
            var position = start
            while position + 8 <= end {
                fields.append(Field(offset: position, width: 4, bigEndian: true))
                let size = bytes[position..<(position + 4)].reduce(0) { $0 << 8 | Int($1) }
                let type = String(decoding: bytes[(position + 4)..<(position + 8)], as: UTF8.self)
                guard size >= 8, position + size <= end else { return }
                if type == "ispe" {
                    fields.append(Field(offset: position + 12, width: 4, bigEndian: true))
                    fields.append(Field(offset: position + 16, width: 4, bigEndian: true))
                }
                if depth < 4 {
                    switch type {
                    case "meta": boxes(from: position + 12, to: position + size, depth: depth + 1)
                    case "iprp", "ipco", "dinf": boxes(from: position + 8, to: position + size, depth: depth + 1)
                    default: break
                    }
                }
                position += size
            }
        }
        boxes(from: 0, to: bytes.count, depth: 0)
        return fields
    }

    static func fixture(_ path: String, _ fields: ([UInt8]) -> [Field]) -> Original? {
        guard let data = try? Fixtures.data(path) else { return nil }
        let bytes = [UInt8](data)
        return Original(name: path, bytes: bytes, fields: fields(bytes))
    }

    /// A small region of a real photo (chelsea.png), for the formats no photo is committed in.
    static let photo: PixelBuffer? = {
        guard let image = try? PixelBuffer(contentsOf: Fixtures.path("Tests/Fixtures/Photos/test/chelsea.png")) else {
            return nil
        }
        return try? image.cropped(to: PixelRect(x: 180, y: 60, width: 40, height: 30))
    }()

    /// RLE8 data for rows of palette indices (bottom row first in the file): runs, then an end of
    /// line, then an end of bitmap.
    static func rle8(_ indices: [UInt8], width: Int, height: Int) -> [UInt8] {
        var data: [UInt8] = []
        for y in stride(from: height - 1, through: 0, by: -1) {
            let row = indices[(y * width)..<((y + 1) * width)]
            var x = row.startIndex
            while x < row.endIndex {
                var end = x + 1
                while end < row.endIndex && row[end] == row[x] && end - x < 255 { end += 1 }
                data += [UInt8(end - x), row[x]]
                x = end
            }
            data += [0, 0]
        }
        return data + [0, 1]
    }

    static func originals(_ format: Format) -> [Original] {
        switch format {
        case .jpeg:
            return [
                "Tests/Fixtures/Photos/test/grace_hopper.jpg", "Tests/Fixtures/Photos/calibration/dog.jpg",
                "Tests/Fixtures/ImageReference/orientation_6.jpg", "Tests/Fixtures/ImageReference/cmyk.jpg",
                "Tests/Fixtures/ImageReference/variants/wide_420_progressive.jpg",
            ].compactMap { fixture($0, jpegFields) }
        case .png:
            return [
                "Tests/Fixtures/Photos/calibration/coins.png", "Tests/Fixtures/Photos/test/chelsea.png",
                "Tests/Fixtures/ImageReference/png_rgb8_interlaced.png",
                "Tests/Fixtures/ImageReference/png_palette8_trns.png",
                "Tests/Fixtures/ImageReference/orientation_6.png",
                "Tests/Fixtures/ImageReference/png_grayalpha16.png",
            ].compactMap { fixture($0, pngFields) }
        case .bmp:
            guard let photo else { return [] }
            let (width, height) = (photo.width, photo.height)
            let rgb = photo.packedBytes
            let gray = photo.converted(to: .gray8).packedBytes
            let grayPalette = (0..<256).map { [UInt8($0), UInt8($0), UInt8($0)] }
            var files = [
                ("bmp24", SyntheticImages.bmp(width: width, height: height, rgb: rgb)),
                (
                    "bmp32 top-down",
                    SyntheticImages.bmp(width: width, height: height, rgb: rgb, bitsPerPixel: 32, topDown: true)
                ),
                (
                    "bmp8",
                    SyntheticImages.bmp(
                        width: width, height: height, rgb: [], bitsPerPixel: 8, palette: grayPalette,
                        indices: gray.map(Int.init))
                ),
                (
                    "bmp4",
                    SyntheticImages.bmp(
                        width: width, height: height, rgb: [], bitsPerPixel: 4,
                        palette: (0..<16).map { [UInt8($0 * 17), 0, 0] },
                        indices: gray.map { Int($0 >> 4) })
                ),
            ]
            // 16-bit 5-5-5, bottom-up.
            let rowBytes = (width * 16 + 31) / 32 * 4
            var sixteen = [UInt8](repeating: 0, count: rowBytes * height)
            for y in 0..<height {
                for x in 0..<width {
                    let p = (y * width + x) * 3
                    let value = Int(rgb[p] >> 3) << 10 | Int(rgb[p + 1] >> 3) << 5 | Int(rgb[p + 2] >> 3)
                    let at = (height - 1 - y) * rowBytes + 2 * x
                    sixteen[at] = UInt8(value & 0xFF)
                    sixteen[at + 1] = UInt8(value >> 8)
                }
            }
            files.append(
                (
                    "bmp16",
                    SyntheticImages.bmpHeader(
                        width: width, height: height, bitsPerPixel: 16, compression: 0, paletteCount: 0,
                        dataSize: sixteen.count) + sixteen
                ))
            // RLE8 of the grey image (quantised to 16 levels so it has runs).
            let levels = gray.map { $0 & 0xF0 }
            let rle = rle8(levels, width: width, height: height)
            var rleFile = SyntheticImages.bmpHeader(
                width: width, height: height, bitsPerPixel: 8, compression: 1, paletteCount: 256, dataSize: rle.count)
            for color in grayPalette { rleFile += [color[2], color[1], color[0], 0] }
            files.append(("bmp8 RLE", rleFile + rle))
            return files.map { Original(name: $0.0, bytes: $0.1, fields: bmpFields) }
        case .pnm:
            guard let photo else { return [] }
            let (width, height) = (photo.width, photo.height)
            let rgb = photo.packedBytes
            let gray = photo.converted(to: .gray8).packedBytes
            let small = Array(rgb.prefix(12 * 3 * 8))
            let files: [(String, [UInt8])] = [
                ("P6", [UInt8]("P6\n# a photo\n\(width) \(height)\n255\n".utf8) + rgb),
                ("P5 16-bit", [UInt8]("P5 \(width) \(height) 65535\n".utf8) + gray.flatMap { [$0, $0 ^ 0x5A] }),
                ("P5", [UInt8]("P5\n\(width) \(height)\n255\n".utf8) + gray),
                ("P3", [UInt8](("P3 12 8 255\n" + small.map(String.init).joined(separator: " ") + "\n").utf8)),
                (
                    "P2",
                    [UInt8](
                        ("P2 40 3 1000\n" + gray.prefix(120).map { String(Int($0) * 3) }.joined(separator: "\n")).utf8)
                ),
            ]
            return files.map { Original(name: $0.0, bytes: $0.1, fields: []) }
        case .webp, .gif, .tiff, .heif, .avif:
            let names: [String]
            let fields: ([UInt8]) -> [Field]
            switch format {
            // Issue 43's well-formed controls too (Tests/Fixtures/Hostile): a WebP animation's frame
            // at an offset, a GIF frame past its screen, a HEIC grid of tiles, so that mutations
            // reach the new bounds (frame rectangles, rows read, grid descriptors and tile counts).
            case .webp:
                (names, fields) = (
                    ["webp_lossy", "webp_lossless", "webp_alpha", "webp_animated", "../Hostile/webp_anim_offset"],
                    webpFields
                )
            case .gif:
                (names, fields) = (
                    [
                        "gif_palette", "gif_transparent", "gif_interlaced", "gif_animated",
                        "../Hostile/gif_frame_past_screen",
                    ], gifFields
                )
            // 16-bit TIFFs (narrowed to 8 bits in the shim) and the HEICs and AVIFs whose
            // transformations and colour conversion heif_decode.c does itself.
            case .tiff:
                (names, fields) = (
                    [
                        "tiff_rgb_lzw", "tiff_rgb_raw", "tiff_rgba_deflate", "tiff_jpeg", "tiff_rgb16", "tiff_rgba16",
                        "tiff_gray16_be_deflate", "tiff_rgb16_be_tiled",
                    ], tiffFields
                )
            case .heif:
                (names, fields) = (
                    [
                        "heic_plain", "heic_irot", "heic_alpha", "../Hostile/heic_grid_small", "heic_rotate_mirror",
                        "heic_irot_even",
                    ], heifFields
                )
            default: (names, fields) = (["avif_plain", "avif_irot_limited", "avif_444", "avif_plain"], heifFields)
            }
            let ext =
                ["webp": "webp", "gif": "gif", "tiff": "tif", "heif": "heic", "avif": "avif"][format.rawValue] ?? ""
            return names.compactMap { fixture("Tests/Fixtures/Formats/\($0).\(ext)", fields) }
        }
    }
}
