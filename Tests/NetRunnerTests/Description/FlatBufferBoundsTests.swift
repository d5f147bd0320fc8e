import NetRunnerFlatBuffers
import Testing

/// The FlatBuffers reader's positions are checked arithmetic: indices and sizes near `Int.max`
/// (from a caller or computed from a file) give `nil` or `.invalid`, never a trap.
@Suite("FlatBuffer positions never overflow")
struct FlatBufferBoundsTests {
    /// A root table whose field 0 is a vector of two int32s, 7 and 9 (32 bytes).
    static let bytes: [UInt8] =
        [12, 0, 0, 0]  // root table at 12
        + [6, 0, 8, 0, 4, 0, 0, 0]  // vtable at 4: 6 bytes, table size 8, field 0 at +4; padding
        + [8, 0, 0, 0]  // table at 12: vtable at 12 - 8
        + [4, 0, 0, 0]  // field 0 at 16: the vector at 16 + 4
        + [2, 0, 0, 0, 7, 0, 0, 0, 9, 0, 0, 0]  // the vector: 2 elements

    @Test("Reads in range work; indices, element numbers and sizes near Int.max give nil")
    func extremes() throws {
        try Self.bytes.withUnsafeBytes { raw in
            let buffer = FlatBuffer(base: try #require(raw.baseAddress), count: raw.count)
            let table = try #require(buffer.root)
            #expect(table.int32Element(0, 0) == 7)
            #expect(table.int32Element(0, 1) == 9)
            #expect(table.vectorCount(0, elementSize: 4).count == 2)
            #expect(table.floats(0).value?.count == 2)
            for element in [2, Int.max, Int.max / 4, Int.max / 4 + 1, Int.min, -1] {
                #expect(table.int32Element(0, element) == nil)
            }
            for index in [1, Int.max, Int.max / 2, Int.min, -1] {
                #expect(table.fieldPosition(index) == nil)
                #expect(table.u32(index, default: 5) == 5)
            }
            for size in [Int.max, Int.max / 2, Int.max / 4 + 1, -1] {
                #expect(table.vectorCount(0, elementSize: size).count == nil)
            }
            for position in [Int.max, Int.max - 1, Int.max - 3, Int.min, -1, 32] {
                #expect(buffer.u8(at: position) == nil)
                #expect(buffer.u16(at: position) == nil)
                #expect(buffer.u32(at: position) == nil)
                #expect(buffer.table(at: position) == nil)
            }
            #expect(buffer.u16(at: 31) == nil)
            #expect(buffer.u32(at: 29) == nil)
        }
        // A buffer shorter than a read.
        try [UInt8](repeating: 0, count: 1).withUnsafeBytes { raw in
            let tiny = FlatBuffer(base: try #require(raw.baseAddress), count: 1)
            #expect(tiny.u16(at: 0) == nil)
            #expect(tiny.u32(at: 0) == nil)
            #expect(tiny.root == nil)
        }
    }
}
