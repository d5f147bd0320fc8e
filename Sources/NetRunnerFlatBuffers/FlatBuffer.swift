// A bounds-checked reader for FlatBuffers tables, vectors and strings.
//
// Invariants: every read checks its offset against the buffer first, so hostile input
// (offsets out of range, negative vtable offsets, lengths past the end) yields `nil`,
// never an out-of-bounds access. Positions are computed with `FlatBuffer.offset` (checked
// arithmetic: `nil` on overflow, never a trap), whatever the file's values or the caller's
// indices. The reader never follows an offset backwards into a
// cycle: callers walk schemas of known, finite depth.

/// A read-only, bounds-checked view of a FlatBuffer: TFLite models (schema `TFL3`) and their
/// metadata (schema `M001`) are read through it.
///
/// - Note: A view: the bytes must outlive it. Not thread-safe to mutate the bytes under it.
public struct FlatBuffer {
    /// The first byte.
    public let base: UnsafeRawPointer
    /// The number of bytes.
    public let count: Int

    /// A view of `count` bytes at `base`.
    ///
    /// - Parameters:
    ///   - base: The first byte.
    ///   - count: The number of bytes.
    public init(base: UnsafeRawPointer, count: Int) {
        self.base = base
        self.count = count
    }

    /// A table in the buffer, located by its absolute position.
    public struct Table {
        /// The buffer.
        public let buffer: FlatBuffer
        /// The table's position.
        public let position: Int
        /// Its vtable's position.
        public let vtable: Int
        /// Its vtable's size in bytes.
        public let vtableSize: Int
    }

    /// `base + count * size + extra`, or `nil` if it overflows `Int` (positions come from the file).
    static func offset(_ base: Int, _ count: Int, times size: Int, plus extra: Int = 0) -> Int? {
        let (scaled, overflow1) = count.multipliedReportingOverflow(by: size)
        let (sum, overflow2) = base.addingReportingOverflow(scaled)
        let (total, overflow3) = sum.addingReportingOverflow(extra)
        return overflow1 || overflow2 || overflow3 ? nil : total
    }

    /// Whether `length` elements of `size` bytes after a 4-byte length prefix at `start` lie
    /// inside the buffer.
    func holds(vectorAt start: Int, length: Int, elementSize: Int) -> Bool {
        guard let end = Self.offset(start, length, times: elementSize, plus: 4) else { return false }
        return end <= count
    }

    /// The root table, or `nil` if the root offset is out of range.
    public var root: Table? {
        guard let offset = u32(at: 0) else { return nil }
        return table(at: Int(offset))
    }

    /// The little-endian value at an absolute position, or `nil` past the end.
    public func u8(at position: Int) -> UInt8? {
        guard position >= 0, position < count else { return nil }
        return base.load(fromByteOffset: position, as: UInt8.self)
    }

    /// The little-endian value at an absolute position, or `nil` past the end.
    public func u16(at position: Int) -> UInt16? {
        guard position >= 0, count >= 2, position <= count - 2 else { return nil }
        return base.loadUnaligned(fromByteOffset: position, as: UInt16.self).littleEndian
    }

    /// The little-endian value at an absolute position, or `nil` past the end.
    public func u32(at position: Int) -> UInt32? {
        guard position >= 0, count >= 4, position <= count - 4 else { return nil }
        return base.loadUnaligned(fromByteOffset: position, as: UInt32.self).littleEndian
    }

    /// The little-endian value at an absolute position, or `nil` past the end.
    public func i32(at position: Int) -> Int32? {
        u32(at: position).map { Int32(bitPattern: $0) }
    }

    /// The table at an absolute position, with its vtable checked.
    public func table(at position: Int) -> Table? {
        guard let relative = i32(at: position) else { return nil }
        let vtable = position - Int(relative)  // position < count, |relative| < 2^31
        guard let vtableSize = u16(at: vtable), vtableSize >= 4, vtableSize % 2 == 0,
            Int(vtableSize) <= count - vtable
        else { return nil }
        return Table(buffer: self, position: position, vtable: vtable, vtableSize: Int(vtableSize))
    }
}

extension FlatBuffer.Table {
    /// The absolute position of field `index`, or `nil` when the field is absent.
    public func fieldPosition(_ index: Int) -> Int? {
        guard index >= 0, let entry = FlatBuffer.offset(4, index, times: 2), entry <= vtableSize - 2,
            let offset = buffer.u16(at: vtable + entry), offset != 0
        else { return nil }
        return position + Int(offset)
    }

    /// Whether field `index` is present.
    public func has(_ index: Int) -> Bool { fieldPosition(index) != nil }

    /// The absolute position an offset field (a string, vector or table) points to, or `nil`
    /// when absent or out of range: what a ``FlatBufferBuilder`` built over this buffer refers to.
    public func referencePosition(_ index: Int) -> Int? { target(index) }

    /// The absolute position an offset field points to.
    private func target(_ index: Int) -> Int? {
        guard let field = fieldPosition(index), let offset = buffer.u32(at: field),
            let target = FlatBuffer.offset(field, Int(offset), times: 1), target < buffer.count
        else { return nil }
        return target
    }

    /// A scalar field read as an unsigned 32-bit value (`default` when absent, `nil` when
    /// out of range).
    public func u32(_ index: Int, default value: UInt32 = 0) -> UInt32? {
        guard let field = fieldPosition(index) else { return value }
        return buffer.u32(at: field)
    }

    /// A scalar field read as a byte (`default` when absent, `nil` when out of range).
    public func u8(_ index: Int, default value: UInt8 = 0) -> UInt8? {
        guard let field = fieldPosition(index) else { return value }
        return buffer.u8(at: field)
    }

    /// A string field: `.absent`, `.invalid` (out of range) or its text.
    public func string(_ index: Int) -> FlatBuffer.Field<String> {
        guard has(index) else { return .absent }
        guard let start = target(index), let length = buffer.u32(at: start),
            buffer.holds(vectorAt: start, length: Int(length), elementSize: 1)
        else { return .invalid }
        let bytes = UnsafeRawBufferPointer(start: buffer.base + start + 4, count: Int(length))
        return .value(String(decoding: bytes, as: UTF8.self))
    }

    /// A sub-table field.
    public func table(_ index: Int) -> FlatBuffer.Field<FlatBuffer.Table> {
        guard has(index) else { return .absent }
        guard let start = target(index), let table = buffer.table(at: start) else { return .invalid }
        return .value(table)
    }

    /// A vector-of-tables field, as its element tables.
    public func tables(_ index: Int, limit: Int = 1 << 20) -> FlatBuffer.Field<[FlatBuffer.Table]> {
        guard has(index) else { return .absent }
        guard let start = target(index), let length = buffer.u32(at: start), Int(length) <= limit,
            buffer.holds(vectorAt: start, length: Int(length), elementSize: 4)
        else { return .invalid }
        var tables: [FlatBuffer.Table] = []
        tables.reserveCapacity(Int(length))
        for element in 0..<Int(length) {
            let slot = start + 4 + 4 * element  // inside the checked vector
            guard let offset = buffer.u32(at: slot), let table = buffer.table(at: slot + Int(offset)) else {
                return .invalid
            }
            tables.append(table)
        }
        return .value(tables)
    }

    /// The length of a vector field (of any element type).
    public func vectorCount(_ index: Int, elementSize: Int) -> FlatBuffer.Field<Int> {
        guard has(index) else { return .absent }
        guard elementSize >= 0, let start = target(index), let length = buffer.u32(at: start),
            buffer.holds(vectorAt: start, length: Int(length), elementSize: elementSize)
        else { return .invalid }
        return .value(Int(length))
    }

    /// The byte range a vector-of-bytes field occupies in the buffer (its elements, not the
    /// length prefix).
    ///
    /// - Parameter index: The field number.
    /// - Returns: `.absent`, `.invalid` (out of range) or the range of positions.
    public func byteRange(_ index: Int) -> FlatBuffer.Field<Range<Int>> {
        guard has(index) else { return .absent }
        guard let start = target(index), let length = buffer.u32(at: start),
            buffer.holds(vectorAt: start, length: Int(length), elementSize: 1)
        else { return .invalid }
        return .value((start + 4)..<(start + 4 + Int(length)))
    }

    /// Element `element` of a vector of 32-bit integers, or `nil` outside the vector.
    public func int32Element(_ index: Int, _ element: Int) -> Int32? {
        guard element >= 0, let start = target(index), let length = buffer.u32(at: start), element < Int(length),
            let position = FlatBuffer.offset(start, element, times: 4, plus: 4)
        else { return nil }
        return buffer.i32(at: position)
    }
}

extension FlatBuffer {
    /// A field that may be absent, present, or present but pointing out of the buffer.
    public enum Field<Value> {
        case absent
        case invalid
        case value(Value)

        /// The value, if present and in range.
        public var value: Value? {
            if case .value(let value) = self { return value }
            return nil
        }
    }
}

extension FlatBuffer.Field where Value == Int {
    /// The length of a vector field: 0 when absent, `nil` when out of range.
    public var count: Int? {
        switch self {
        case .absent: 0
        case .invalid: nil
        case .value(let count): count
        }
    }
}

extension FlatBuffer.Table {
    /// A 32-bit float scalar field (`default` when absent, `nil` when out of range).
    ///
    /// - Parameters:
    ///   - index: The field number.
    ///   - value: The schema's default.
    /// - Returns: The value.
    public func float(_ index: Int, default value: Float = 0) -> Float? {
        guard let field = fieldPosition(index) else { return value }
        return buffer.u32(at: field).map { Float(bitPattern: $0) }
    }

    /// A vector of 32-bit floats, at most `limit` long.
    ///
    /// - Parameters:
    ///   - index: The field number.
    ///   - limit: The longest vector accepted (longer ones are `.invalid`).
    /// - Returns: The values.
    public func floats(_ index: Int, limit: Int = 1 << 16) -> FlatBuffer.Field<[Float]> {
        switch vectorCount(index, elementSize: 4) {
        case .absent: return .absent
        case .invalid: return .invalid
        case .value(let count):
            guard count <= limit else { return .invalid }
            var values: [Float] = []
            values.reserveCapacity(count)
            for element in 0..<count {
                guard let bits = int32Element(index, element) else { return .invalid }
                values.append(Float(bitPattern: UInt32(bitPattern: bits)))
            }
            return .value(values)
        }
    }

    /// A vector of strings, at most `limit` long.
    ///
    /// - Parameters:
    ///   - index: The field number.
    ///   - limit: The longest vector accepted.
    /// - Returns: The strings.
    public func strings(_ index: Int, limit: Int = 1 << 16) -> FlatBuffer.Field<[String]> {
        switch vectorCount(index, elementSize: 4) {
        case .absent: return .absent
        case .invalid: return .invalid
        case .value(let count):
            guard count <= limit, let field = fieldPosition(index), let offset = buffer.u32(at: field) else {
                return .invalid
            }
            let start = field + Int(offset)  // field < count, offset < 2^32
            var values: [String] = []
            for element in 0..<count {
                let slot = start + 4 + 4 * element  // inside the vector vectorCount checked
                guard let relative = buffer.u32(at: slot) else { return .invalid }
                let position = slot + Int(relative)
                guard let length = buffer.u32(at: position),
                    buffer.holds(vectorAt: position, length: Int(length), elementSize: 1)
                else {
                    return .invalid
                }
                let bytes = UnsafeRawBufferPointer(start: buffer.base + position + 4, count: Int(length))
                values.append(String(decoding: bytes, as: UTF8.self))
            }
            return .value(values)
        }
    }
}
