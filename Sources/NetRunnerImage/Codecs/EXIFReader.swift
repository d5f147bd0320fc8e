// Reads the EXIF orientation tag from a JPEG APP1 segment or a PNG eXIf chunk.
//
// Invariants: every read goes through `UInt8Reader`, which returns nil for any offset or
// length outside the buffer; loops are bounded by the buffer's size (JPEG segments advance by
// at least 2 bytes, IFD entries are capped at what fits), so hostile data can neither read out
// of bounds nor loop forever.

/// Bounds-checked big- and little-endian reads from raw bytes.
struct UInt8Reader {
    let bytes: UnsafeRawBufferPointer

    func byte(_ offset: Int) -> Int? {
        offset >= 0 && offset < bytes.count ? Int(bytes[offset]) : nil
    }

    /// `offset + delta`, or nil when it overflows (offsets come from the file).
    static func advance(_ offset: Int, by delta: Int) -> Int? {
        let (value, overflow) = offset.addingReportingOverflow(delta)
        return overflow ? nil : value
    }

    func u16(_ offset: Int, bigEndian: Bool) -> Int? {
        guard let next = Self.advance(offset, by: 1), let a = byte(offset), let b = byte(next) else { return nil }
        return bigEndian ? a << 8 | b : b << 8 | a
    }

    func u32(_ offset: Int, bigEndian: Bool) -> Int? {
        guard let next = Self.advance(offset, by: 2),
            let low = u16(bigEndian ? next : offset, bigEndian: bigEndian),
            let high = u16(bigEndian ? offset : next, bigEndian: bigEndian)
        else { return nil }
        return high << 16 | low
    }

    func i32(_ offset: Int, bigEndian: Bool) -> Int? {
        guard let value = u32(offset, bigEndian: bigEndian) else { return nil }
        return Int(Int32(truncatingIfNeeded: value))
    }

    func starts(with prefix: [UInt8], at offset: Int) -> Bool {
        guard offset >= 0, prefix.count <= bytes.count, offset <= bytes.count - prefix.count else { return false }
        return prefix.indices.allSatisfy { bytes[offset + $0] == prefix[$0] }
    }
}

/// EXIF orientation from JPEG and PNG files.
enum EXIFReader {
    static let orientationTag = 0x0112

    /// The orientation in a TIFF structure (the EXIF payload), or nil if absent or malformed.
    static func orientation(tiff: UnsafeRawBufferPointer) -> ImageOrientation? {
        let reader = UInt8Reader(bytes: tiff)
        let bigEndian: Bool
        if reader.starts(with: [0x4D, 0x4D], at: 0) {
            bigEndian = true
        } else if reader.starts(with: [0x49, 0x49], at: 0) {
            bigEndian = false
        } else {
            return nil
        }
        guard reader.u16(2, bigEndian: bigEndian) == 42, let ifd = reader.u32(4, bigEndian: bigEndian),
            let count = reader.u16(ifd, bigEndian: bigEndian)
        else { return nil }
        return orientation(reader, ifd: ifd, count: count, bigEndian: bigEndian)
    }

    /// The orientation among the `count` entries of the IFD at `ifd` (both read from the file:
    /// any values, so every offset is computed with checked arithmetic).
    static func orientation(_ reader: UInt8Reader, ifd: Int, count: Int, bigEndian: Bool) -> ImageOrientation? {
        guard ifd >= 0, ifd < reader.bytes.count, count > 0 else { return nil }
        let fitting = min(count, max(reader.bytes.count - ifd - 2, 0) / 12)
        for index in 0..<fitting {
            let entry = ifd + 2 + index * 12  // < bytes.count: index < fitting
            guard reader.u16(entry, bigEndian: bigEndian) == orientationTag else { continue }
            guard reader.u16(entry + 2, bigEndian: bigEndian) == 3,  // SHORT
                let value = reader.u16(entry + 8, bigEndian: bigEndian)
            else { return nil }
            return ImageOrientation(rawValue: value)
        }
        return nil
    }

    /// The orientation in a PNG's `eXIf` chunk before the image data, walking the chunks from
    /// the signature (each step advances by at least 12 bytes; lengths are checked against the
    /// data left).
    static func pngOrientation(_ bytes: UnsafeRawBufferPointer) -> ImageOrientation? {
        let reader = UInt8Reader(bytes: bytes)
        var position = 8
        while let length = reader.u32(position, bigEndian: true) {
            let data = position + 8
            guard data <= bytes.count, length <= bytes.count - data else { return nil }
            if reader.starts(with: Array("IDAT".utf8), at: position + 4) { return nil }
            if reader.starts(with: Array("eXIf".utf8), at: position + 4) {
                return orientation(tiff: UnsafeRawBufferPointer(rebasing: bytes[data..<(data + length)]))
            }
            position = data + length + 4
        }
        return nil
    }

    /// The orientation in a JPEG's `Exif` APP1 segment, scanning markers up to the first scan.
    static func jpegOrientation(_ bytes: UnsafeRawBufferPointer) -> ImageOrientation? {
        let reader = UInt8Reader(bytes: bytes)
        var position = 2
        while let marker = reader.byte(position + 1), reader.byte(position) == 0xFF {
            if marker == 0xFF {
                position += 1
                continue
            }
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) {
                position += 2
                continue
            }
            if marker == 0xDA || marker == 0xD9 { return nil }
            guard let length = reader.u16(position + 2, bigEndian: true), length >= 2 else { return nil }
            let start = position + 4  // position < bytes.count, length < 65536: no overflow
            if marker == 0xE1, reader.starts(with: Array("Exif\0\0".utf8), at: start) {
                let end = min(position + 2 + length, bytes.count)
                guard end > start + 6 else { return nil }
                return orientation(tiff: UnsafeRawBufferPointer(rebasing: bytes[(start + 6)..<end]))
            }
            position += 2 + length
        }
        return nil
    }
}
