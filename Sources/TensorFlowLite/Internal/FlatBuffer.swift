// A bounds-checked reader for FlatBuffers tables, vectors and strings.
//
// Invariants: every read checks its offset against the buffer first, so hostile input
// (offsets out of range, negative vtable offsets, lengths past the end) yields `nil`,
// never an out-of-bounds access. The reader never follows an offset backwards into a
// cycle: callers walk schemas of known, finite depth.

/// A read-only view of a FlatBuffer.
struct FlatBuffer {
    let base: UnsafeRawPointer
    let count: Int

    /// A table in the buffer, located by its absolute position.
    struct Table {
        let buffer: FlatBuffer
        let position: Int
        let vtable: Int
        let vtableSize: Int
    }

    /// The root table, or `nil` if the root offset is out of range.
    var root: Table? {
        guard let offset = u32(at: 0) else { return nil }
        return table(at: Int(offset))
    }

    func u8(at position: Int) -> UInt8? {
        guard position >= 0, position < count else { return nil }
        return base.load(fromByteOffset: position, as: UInt8.self)
    }

    func u16(at position: Int) -> UInt16? {
        guard position >= 0, position <= count - 2 else { return nil }
        return base.loadUnaligned(fromByteOffset: position, as: UInt16.self).littleEndian
    }

    func u32(at position: Int) -> UInt32? {
        guard position >= 0, position <= count - 4 else { return nil }
        return base.loadUnaligned(fromByteOffset: position, as: UInt32.self).littleEndian
    }

    func i32(at position: Int) -> Int32? {
        u32(at: position).map { Int32(bitPattern: $0) }
    }

    /// The table at an absolute position, with its vtable checked.
    func table(at position: Int) -> Table? {
        guard let relative = i32(at: position) else { return nil }
        let vtable = position - Int(relative)
        guard let vtableSize = u16(at: vtable), vtableSize >= 4, vtableSize % 2 == 0,
            vtable + Int(vtableSize) <= count
        else { return nil }
        return Table(buffer: self, position: position, vtable: vtable, vtableSize: Int(vtableSize))
    }
}

extension FlatBuffer.Table {
    /// The absolute position of field `index`, or `nil` when the field is absent.
    func fieldPosition(_ index: Int) -> Int? {
        let entry = 4 + 2 * index
        guard entry + 2 <= vtableSize, let offset = buffer.u16(at: vtable + entry), offset != 0 else { return nil }
        return position + Int(offset)
    }

    /// Whether field `index` is present.
    func has(_ index: Int) -> Bool { fieldPosition(index) != nil }

    /// The absolute position an offset field points to.
    private func target(_ index: Int) -> Int? {
        guard let field = fieldPosition(index), let offset = buffer.u32(at: field) else { return nil }
        let target = field + Int(offset)
        return target < buffer.count ? target : nil
    }

    /// A scalar field read as an unsigned 32-bit value (`default` when absent, `nil` when
    /// out of range).
    func u32(_ index: Int, default value: UInt32 = 0) -> UInt32? {
        guard let field = fieldPosition(index) else { return value }
        return buffer.u32(at: field)
    }

    /// A scalar field read as a byte (`default` when absent, `nil` when out of range).
    func u8(_ index: Int, default value: UInt8 = 0) -> UInt8? {
        guard let field = fieldPosition(index) else { return value }
        return buffer.u8(at: field)
    }

    /// A string field: `.absent`, `.invalid` (out of range) or its text.
    func string(_ index: Int) -> FlatBuffer.Field<String> {
        guard has(index) else { return .absent }
        guard let start = target(index), let length = buffer.u32(at: start),
            start + 4 + Int(length) <= buffer.count
        else { return .invalid }
        let bytes = UnsafeRawBufferPointer(start: buffer.base + start + 4, count: Int(length))
        return .value(String(decoding: bytes, as: UTF8.self))
    }

    /// A sub-table field.
    func table(_ index: Int) -> FlatBuffer.Field<FlatBuffer.Table> {
        guard has(index) else { return .absent }
        guard let start = target(index), let table = buffer.table(at: start) else { return .invalid }
        return .value(table)
    }

    /// A vector-of-tables field, as its element tables.
    func tables(_ index: Int, limit: Int = 1 << 20) -> FlatBuffer.Field<[FlatBuffer.Table]> {
        guard has(index) else { return .absent }
        guard let start = target(index), let length = buffer.u32(at: start), Int(length) <= limit,
            start + 4 + 4 * Int(length) <= buffer.count
        else { return .invalid }
        var tables: [FlatBuffer.Table] = []
        tables.reserveCapacity(Int(length))
        for element in 0..<Int(length) {
            let slot = start + 4 + 4 * element
            guard let offset = buffer.u32(at: slot), let table = buffer.table(at: slot + Int(offset)) else {
                return .invalid
            }
            tables.append(table)
        }
        return .value(tables)
    }

    /// The length of a vector field (of any element type).
    func vectorCount(_ index: Int, elementSize: Int) -> FlatBuffer.Field<Int> {
        guard has(index) else { return .absent }
        guard let start = target(index), let length = buffer.u32(at: start),
            start + 4 + elementSize * Int(length) <= buffer.count
        else { return .invalid }
        return .value(Int(length))
    }

    /// Element `element` of a vector of 32-bit integers.
    func int32Element(_ index: Int, _ element: Int) -> Int32? {
        guard let start = target(index) else { return nil }
        return buffer.i32(at: start + 4 + 4 * element)
    }
}

extension FlatBuffer {
    /// A field that may be absent, present, or present but pointing out of the buffer.
    enum Field<Value> {
        case absent
        case invalid
        case value(Value)

        var value: Value? {
            if case .value(let value) = self { return value }
            return nil
        }
    }
}

extension FlatBuffer.Field where Value == Int {
    /// The length of a vector field: 0 when absent, `nil` when out of range.
    var count: Int? {
        switch self {
        case .absent: 0
        case .invalid: nil
        case .value(let count): count
        }
    }
}
