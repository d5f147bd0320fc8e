// A FlatBuffers writer that builds back to front, optionally in front of an existing buffer.
//
// Invariants: objects are prepended, so every offset written points forward (to an object
// built earlier, at a higher position), as FlatBuffers requires. Positions are counted from
// the buffer's end ("from end"), so an object's handle never changes as more is prepended.
// Alignment is kept relative to the end; `finished` pads the front so that the total length is
// a multiple of the largest alignment, which makes every absolute position aligned too. An
// existing buffer given as the tail is padded at its end to a multiple of 16 bytes, so its own
// objects keep their alignment and their relative offsets: new tables can point into it.

/// Writes FlatBuffers: tables, vectors and strings, built children first.
///
///     var builder = FlatBufferBuilder()
///     let name = builder.string("input")
///     builder.startTable()
///     builder.add(offset: name, field: 3)
///     builder.add(UInt8(0), field: 1)
///     let tensor = builder.endTable()
///     let bytes = builder.finished(root: tensor, identifier: "TFL3")
///
/// Built over an existing buffer (`FlatBufferBuilder(tail:)`), it can refer to that buffer's
/// objects by their absolute positions there (``reference(toTailPosition:)``): a new root table
/// that reuses most of a model and adds to it, without rewriting what it does not know.
public struct FlatBufferBuilder {
    /// A built object: its distance from the buffer's end to its first byte.
    public struct Offset: Hashable, Sendable {
        /// Bytes from the object's start to the end of the buffer.
        public let fromEnd: Int
    }

    /// The bytes prepended so far, the latest last (reversed order).
    private var reversed: [UInt8] = []
    /// The existing buffer, padded to a multiple of 16 bytes.
    private let tail: [UInt8]
    /// The largest alignment asked for, which the finished length is a multiple of.
    private var largestAlignment = 8
    /// The fields of the table being built: field number and position from end.
    private var fields: [(field: Int, fromEnd: Int)] = []
    /// Where the table being built ends, from end.
    private var tableEnd = 0

    /// An empty builder.
    public init() {
        tail = []
    }

    /// A builder in front of an existing buffer, whose objects new ones may refer to.
    ///
    /// - Parameter tail: The existing buffer (its own root offset stays in it, unused).
    public init(tail: [UInt8]) {
        var padded = tail
        padded += [UInt8](repeating: 0, count: (16 - padded.count % 16) % 16)
        self.tail = padded
        largestAlignment = 16
    }

    /// The bytes from the front built so far to the end.
    public var size: Int { reversed.count + tail.count }

    /// An object of the tail buffer, by its absolute position in that buffer.
    ///
    /// - Parameter position: The position of a table, vector or string in the tail buffer.
    /// - Returns: Its handle.
    public func reference(toTailPosition position: Int) -> Offset {
        Offset(fromEnd: tail.count - position)
    }

    /// Pads so that `additional` more bytes end on a multiple of `alignment` from the end.
    public mutating func align(_ alignment: Int, additional: Int = 0) {
        largestAlignment = max(largestAlignment, alignment)
        while (size + additional) % alignment != 0 { reversed.append(0) }
    }

    private mutating func prependRaw<T: FixedWidthInteger>(_ value: T) {
        // The value's bytes, last first (little-endian: the most significant byte last in
        // memory, so first into the reversed store).
        let little = value.littleEndian
        withUnsafeBytes(of: little) { bytes in
            for byte in bytes.reversed() { reversed.append(byte) }
        }
    }

    /// Prepends a scalar, aligned to its size.
    public mutating func prepend<T: FixedWidthInteger>(_ value: T) {
        align(MemoryLayout<T>.size)
        prependRaw(value)
    }

    /// Prepends an offset to `target` (an unsigned 32-bit distance, forward).
    public mutating func prepend(offset target: Offset) {
        align(4)
        prependRaw(UInt32(size + 4 - target.fromEnd))
    }

    // MARK: - Vectors and strings

    /// A string: its UTF-8 bytes, a zero, and its length.
    ///
    /// - Parameter text: The string.
    /// - Returns: Its handle.
    public mutating func string(_ text: String) -> Offset {
        let bytes = Array(text.utf8)
        align(4, additional: bytes.count + 1)
        reversed.append(0)
        for byte in bytes.reversed() { reversed.append(byte) }
        prependRaw(UInt32(bytes.count))
        return Offset(fromEnd: size)
    }

    /// A vector of bytes whose first element is aligned to `alignment` (TFLite's buffers: 16).
    ///
    /// - Parameters:
    ///   - bytes: The elements.
    ///   - alignment: The alignment of the first element.
    /// - Returns: Its handle.
    public mutating func vector(bytes: [UInt8], alignment: Int = 4) -> Offset {
        align(max(alignment, 4), additional: bytes.count)
        for byte in bytes.reversed() { reversed.append(byte) }
        prependRaw(UInt32(bytes.count))
        return Offset(fromEnd: size)
    }

    /// A vector of scalars.
    ///
    /// - Parameter values: The elements.
    /// - Returns: Its handle.
    public mutating func vector<T: FixedWidthInteger>(_ values: [T]) -> Offset {
        let width = MemoryLayout<T>.size
        align(max(width, 4), additional: values.count * width)
        for value in values.reversed() { prependRaw(value) }
        prependRaw(UInt32(values.count))
        return Offset(fromEnd: size)
    }

    /// A vector of offsets (tables, strings, vectors).
    ///
    /// - Parameter targets: The elements' objects.
    /// - Returns: Its handle.
    public mutating func vector(offsets targets: [Offset]) -> Offset {
        align(4, additional: targets.count * 4)
        for target in targets.reversed() { prepend(offset: target) }
        prependRaw(UInt32(targets.count))
        return Offset(fromEnd: size)
    }

    // MARK: - Tables

    /// Starts a table.
    ///
    /// Its fields follow (``add(_:field:)``, ``add(offset:field:)``), then ``endTable()``.
    /// Tables do not nest: build a table's children before starting it.
    public mutating func startTable() {
        fields = []
        tableEnd = size
    }

    /// Adds a scalar field (always written, even when it equals the schema's default).
    public mutating func add<T: FixedWidthInteger>(_ value: T, field: Int) {
        prepend(value)
        fields.append((field, size))
    }

    /// Adds a 32-bit float field.
    public mutating func add(_ value: Float, field: Int) {
        add(value.bitPattern, field: field)
    }

    /// Adds an offset field.
    public mutating func add(offset target: Offset, field: Int) {
        prepend(offset: target)
        fields.append((field, size))
    }

    /// Ends the table: its vtable is written in front of it.
    ///
    /// - Returns: The table's handle.
    public mutating func endTable() -> Offset {
        prepend(Int32(0))  // The table's first field: its vtable's distance, set below.
        let tableStart = size
        let count = (fields.map(\.field).max() ?? -1) + 1
        var slots = [UInt16](repeating: 0, count: count)
        for (field, fromEnd) in fields { slots[field] = UInt16(tableStart - fromEnd) }
        for slot in slots.reversed() { prepend(slot) }
        prepend(UInt16(tableStart - tableEnd))
        prepend(UInt16(4 + 2 * count))
        let vtableStart = size
        // The table's soffset: table position - vtable position, the vtable being in front.
        let soffset = Int32(vtableStart - tableStart)
        withUnsafeBytes(of: soffset.littleEndian) { bytes in
            for (k, byte) in bytes.enumerated() { reversed[tableStart - k - tail.count - 1] = byte }
        }
        fields = []
        return Offset(fromEnd: tableStart)
    }

    // MARK: - Finishing

    /// The whole buffer: the root offset, the file identifier if any, what was built and the
    /// tail.
    ///
    /// - Parameters:
    ///   - root: The root table.
    ///   - identifier: A 4-character file identifier (`TFL3`), or `nil`.
    /// - Returns: The bytes.
    public mutating func finished(root: Offset, identifier: String? = nil) -> [UInt8] {
        let identifierBytes = identifier.map { Array($0.utf8.prefix(4)) } ?? []
        align(largestAlignment, additional: 4 + identifierBytes.count)
        for byte in identifierBytes.reversed() { reversed.append(byte) }
        prepend(offset: root)
        return reversed.reversed() + tail
    }
}
