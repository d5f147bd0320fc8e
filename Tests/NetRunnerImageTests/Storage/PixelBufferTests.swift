import NetRunnerImage
import Testing

@Suite("PixelBuffer storage, copy-on-write and pixel access")
struct PixelBufferTests {
    @Test("A new buffer is zeroed with packed rows")
    func zeroed() throws {
        let buffer = try PixelBuffer(width: 5, height: 3, format: .bgra32)
        #expect(buffer.bytesPerRow == 20)
        #expect(buffer.packedBytes == [UInt8](repeating: 0, count: 60))
        #expect(buffer.description == "PixelBuffer(5x3 bgra32)")
    }

    @Test("Copies share memory until one is written")
    func copyOnWrite() throws {
        var first = try PixelBuffer(width: 2, height: 2, format: .gray8, bytes: [1, 2, 3, 4])
        let second = first
        first[x: 1, y: 1, channel: 0] = 9
        #expect(first.packedBytes == [1, 2, 3, 9])
        #expect(second.packedBytes == [1, 2, 3, 4])
        var third = second
        third.withUnsafeMutableBytes { $0[0] = 7 }
        #expect(second.pixel(x: 0, y: 0) == [1])
        #expect(third.pixel(x: 0, y: 0) == [7])
    }

    @Test("Bytes with padded rows are copied with their stride, padding ignored by ==")
    func paddedRows() throws {
        let padded: [UInt8] = [1, 2, 3, 0xEE, 4, 5, 6, 0xEE]
        let buffer = try padded.withUnsafeBytes {
            try PixelBuffer(width: 1, height: 2, format: .rgb24, bytesPerRow: 4, copying: $0)
        }
        #expect(buffer.bytesPerRow == 4)
        #expect(buffer.pixel(x: 0, y: 1) == [4, 5, 6])
        #expect(buffer.packedBytes == [1, 2, 3, 4, 5, 6])
        #expect(buffer == (try PixelBuffer(width: 1, height: 2, format: .rgb24, bytes: [1, 2, 3, 4, 5, 6])))
        // The last row may omit its padding.
        let short = try padded.prefix(7).withUnsafeBytes {
            try PixelBuffer(width: 1, height: 2, format: .rgb24, bytesPerRow: 4, copying: UnsafeRawBufferPointer($0))
        }
        #expect(short == buffer)
    }

    @Test("Invalid sizes, strides and short byte arrays throw")
    func invalid() {
        #expect(throws: ImageError.invalidSize(width: 0, height: 4)) {
            try PixelBuffer(width: 0, height: 4, format: .rgb24)
        }
        #expect(throws: ImageError.invalidSize(width: Int.max, height: 2)) {
            try PixelBuffer(width: Int.max, height: 2, format: .rgba32)
        }
        #expect(throws: ImageError.bufferTooSmall(provided: 5, required: 6)) {
            try PixelBuffer(width: 2, height: 1, format: .rgb24, bytes: [1, 2, 3, 4, 5])
        }
        #expect(throws: ImageError.invalidSize(width: 2, height: 1)) {
            try [UInt8](repeating: 0, count: 8).withUnsafeBytes {
                try PixelBuffer(width: 2, height: 1, format: .rgb24, bytesPerRow: 5, copying: $0)
            }
        }
        #expect(throws: ImageError.outOfMemory(byteCount: 1 << 62)) {
            try PixelBuffer(width: 1 << 30, height: 1 << 30, format: .rgba32)
        }
    }
}
