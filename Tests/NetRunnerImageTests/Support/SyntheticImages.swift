import Foundation
import NetRunnerImage

/// Small hand-built image files for decoder tests.
enum SyntheticImages {
    static func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
    static func le32(_ value: Int) -> [UInt8] { le16(value & 0xFFFF) + le16(value >> 16 & 0xFFFF) }
    static func be16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
    static func be32(_ value: Int) -> [UInt8] { be16(value >> 16 & 0xFFFF) + be16(value & 0xFFFF) }

    /// SOI + a baseline SOF0 claiming `width` x `height`, then nothing.
    static func jpegHeader(width: Int, height: Int) -> [UInt8] {
        var bytes: [UInt8] = [0xFF, 0xD8]
        bytes += [0xFF, 0xDB] + be16(67) + [0] + [UInt8](repeating: 1, count: 64)  // quantisation table
        bytes += [0xFF, 0xC0] + be16(17) + [8] + be16(height) + be16(width) + [3]
        bytes += [1, 0x22, 0, 2, 0x11, 0, 3, 0x11, 0]
        bytes += [0xFF, 0xC4] + be16(20) + [0x00] + [1] + [UInt8](repeating: 0, count: 15) + [0]  // DC table
        bytes += [0xFF, 0xC4] + be16(20) + [0x10] + [1] + [UInt8](repeating: 0, count: 15) + [0]  // AC table
        bytes += [0xFF, 0xDA] + be16(12) + [3, 1, 0x00, 2, 0x00, 3, 0x00, 0, 63, 0]
        return bytes
    }

    /// A PNG signature and IHDR claiming `width` x `height` RGB, with a correct CRC, and no data.
    static func pngHeader(width: Int, height: Int) -> [UInt8] {
        let ihdr: [UInt8] = Array("IHDR".utf8) + be32(width) + be32(height) + [8, 2, 0, 0, 0]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + be32(13) + ihdr + be32(Int(crc32(ihdr)))
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return crc ^ 0xFFFF_FFFF
    }

    /// A 24-bit BMP header (no pixels).
    static func bmp24Header(width: Int, height: Int) -> [UInt8] {
        bmpHeader(width: width, height: height, bitsPerPixel: 24, compression: 0, paletteCount: 0, dataSize: 0)
    }

    static func bmpHeader(
        width: Int, height: Int, bitsPerPixel: Int, compression: Int, paletteCount: Int, dataSize: Int
    ) -> [UInt8] {
        let offset = 14 + 40 + paletteCount * 4
        var bytes: [UInt8] = Array("BM".utf8) + le32(offset + dataSize) + le32(0) + le32(offset)
        bytes += le32(40) + le32(width) + le32(height) + le16(1) + le16(bitsPerPixel) + le32(compression)
        bytes += le32(dataSize) + le32(2835) + le32(2835) + le32(paletteCount) + le32(0)
        return bytes
    }

    /// A BMP of `pixels` (RGB triples, top row first) with the given layout.
    static func bmp(
        width: Int, height: Int, rgb: [UInt8], bitsPerPixel: Int = 24, topDown: Bool = false,
        palette: [[UInt8]] = [], indices: [Int] = []
    ) -> [UInt8] {
        let stride = (width * bitsPerPixel + 31) / 32 * 4
        var data = [UInt8](repeating: 0, count: stride * height)
        for row in 0..<height {
            let y = topDown ? row : height - 1 - row
            for x in 0..<width {
                let at = row * stride
                switch bitsPerPixel {
                case 24, 32:
                    let p = (y * width + x) * 3
                    let b = at + x * bitsPerPixel / 8
                    data[b] = rgb[p + 2]
                    data[b + 1] = rgb[p + 1]
                    data[b + 2] = rgb[p]
                    if bitsPerPixel == 32 { data[b + 3] = 0 }
                default:
                    let index = indices[y * width + x]
                    let bit = x * bitsPerPixel
                    data[at + bit / 8] |= UInt8(index << (8 - bitsPerPixel - bit % 8))
                }
            }
        }
        var bytes = bmpHeader(
            width: width, height: topDown ? -height : height, bitsPerPixel: bitsPerPixel, compression: 0,
            paletteCount: palette.count, dataSize: data.count)
        for color in palette { bytes += [color[2], color[1], color[0], 0] }
        return bytes + data
    }

    /// Deterministic RGB test pattern.
    static func pattern(width: Int, height: Int, channels: Int = 3) -> [UInt8] {
        (0..<(width * height * channels)).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ $0 / 7) }
    }
}
