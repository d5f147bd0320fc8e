// Netpbm decoding, written by hand: P2/P5 graymaps and P3/P6 pixmaps, maxval 1...65535.
//
// Invariants: every byte is read through bounds-checked indices (`position < bytes.count`);
// numbers are limited to 9 digits so they cannot overflow, and the sample count is checked
// arithmetic (a `.corrupt` error, never a trap, whatever the pixel limit); before the pixel buffer is
// allocated the size passes the pixel limit and the file is checked to be long enough for
// every sample (binary: exactly; ASCII: at least two bytes per sample but the last), so a
// tiny file cannot make us allocate a huge image.

enum PNMDecoder {
    static func decode(_ bytes: UnsafeRawBufferPointer, _ context: DecodeContext) throws(ImageError) -> DecodedImage {
        let source = context.source
        func corrupt(_ reason: String) -> ImageError { .corrupt(source: source, format: .pnm, reason: reason) }
        let kind = bytes.count > 1 ? bytes[1] : 0
        let channels: Int
        let ascii: Bool
        switch kind {
        case UInt8(ascii: "2"): (channels, ascii) = (1, true)
        case UInt8(ascii: "3"): (channels, ascii) = (3, true)
        case UInt8(ascii: "5"): (channels, ascii) = (1, false)
        case UInt8(ascii: "6"): (channels, ascii) = (3, false)
        case UInt8(ascii: "1"), UInt8(ascii: "4"):
            throw .unsupportedVariant(
                source: source, format: .pnm, detail: "P\(Character(UnicodeScalar(kind))) bitmaps")
        default:
            throw .unsupportedVariant(source: source, format: .pnm, detail: "P\(Character(UnicodeScalar(kind))) files")
        }
        var scanner = Scanner(bytes: bytes, position: 2)
        let width = try scanner.number(context, "width")
        let height = try scanner.number(context, "height")
        let maximum = try scanner.number(context, "maxval")
        guard (1...65535).contains(maximum) else { throw corrupt("maxval \(maximum) is outside 1...65535") }
        guard scanner.position < bytes.count, isSpace(bytes[scanner.position]) else {
            throw scanner.position >= bytes.count
                ? .truncated(source: source, format: .pnm) : corrupt("no whitespace after maxval")
        }
        scanner.position += 1
        try context.checkSize(width: width, height: height)
        let samples = try context.product(context.product(width, height, "pixel count"), channels, "sample count")
        let sampleBytes = maximum > 255 ? 2 : 1
        let remaining = bytes.count - scanner.position
        if ascii {
            guard remaining / 2 >= samples - 1 else { throw .truncated(source: source, format: .pnm) }
        } else {
            guard remaining / sampleBytes >= samples else { throw .truncated(source: source, format: .pnm) }
        }
        var pixels = try PixelBuffer(width: width, height: height, format: channels == 1 ? .gray8 : .rgb24)
        var failure: ImageError?
        pixels.withUnsafeMutableBytes { output in
            var position = scanner.position
            for index in 0..<samples {
                var value: Int
                if ascii {
                    do throws(ImageError) {
                        value = try scanner.number(context, "sample")
                    } catch {
                        failure = error
                        return
                    }
                } else if sampleBytes == 2 {
                    value = Int(bytes[position]) << 8 | Int(bytes[position + 1])
                    position += 2
                } else {
                    value = Int(bytes[position])
                    position += 1
                }
                guard value <= maximum else {
                    failure = corrupt("sample \(value) is larger than maxval \(maximum)")
                    return
                }
                if maximum != 255 { value = (value * 255 + maximum / 2) / maximum }
                output[index] = UInt8(truncatingIfNeeded: value)
            }
        }
        if let failure { throw failure }
        return DecodedImage(
            pixels: pixels, format: .pnm, orientation: .up, storedSize: PixelSize(width: width, height: height))
    }

    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0B || byte == 0x0C
    }

    /// Reads whitespace-separated decimal numbers, skipping `#` comments.
    struct Scanner {
        let bytes: UnsafeRawBufferPointer
        var position: Int

        mutating func number(_ context: DecodeContext, _ field: String) throws(ImageError) -> Int {
            while position < bytes.count {
                if isSpace(bytes[position]) {
                    position += 1
                } else if bytes[position] == UInt8(ascii: "#") {
                    while position < bytes.count && bytes[position] != 0x0A && bytes[position] != 0x0D { position += 1 }
                } else {
                    break
                }
            }
            guard position < bytes.count else { throw .truncated(source: context.source, format: .pnm) }
            var value = 0
            var digits = 0
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
                guard digits < 9 else {
                    throw .corrupt(source: context.source, format: .pnm, reason: "the \(field) has too many digits")
                }
                value = value * 10 + Int(bytes[position] - UInt8(ascii: "0"))
                digits += 1
                position += 1
            }
            guard digits > 0 else {
                throw .corrupt(
                    source: context.source, format: .pnm,
                    reason: "expected a number for the \(field), found byte \(bytes[position])")
            }
            return value
        }
    }
}
