// PixelBuffer: the value type over PixelStorage.
//
// Invariants: width > 0, height > 0, bytesPerRow >= width * format.bytesPerPixel, and
// `storage.capacity >= (height - 1) * bytesPerRow + width * format.bytesPerPixel` (the last
// row may omit its padding). Pixel (x, y) starts at byte `y * bytesPerRow + x * bytesPerPixel`.
// Every mutation goes through `makeUnique()` first, so shared storage is never written.
// Pointers handed to closures are valid only for the closure's duration.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An image in memory: `width` x `height` pixels of one ``PixelFormat``, rows `bytesPerRow` apart.
///
/// `PixelBuffer` is a copy-on-write value: copies share memory until one of them is written.
/// Rows of buffers NetRunnerImage creates are packed (`bytesPerRow == width * bytesPerPixel`),
/// and the memory is 64-byte aligned; buffers made from caller bytes keep the caller's stride.
///
///     var frame = try PixelBuffer(width: 640, height: 480, format: .bgra32)
///     let input = try frame.centerThumbnail(ofSize: .square(224)).converted(to: .rgb24)
///
/// - Note: A `PixelBuffer` is `Sendable`; copies on different threads are independent.
public struct PixelBuffer: Sendable {
    /// The number of columns (at least 1).
    public private(set) var width: Int
    /// The number of rows (at least 1).
    public private(set) var height: Int
    /// The layout of each pixel.
    public private(set) var format: PixelFormat
    /// The distance in bytes from one row to the next (at least `width * format.bytesPerPixel`).
    public private(set) var bytesPerRow: Int

    var storage: PixelStorage

    /// The size in pixels.
    public var size: PixelSize { PixelSize(width: width, height: height) }

    /// The bytes of pixel data in one row, without padding.
    var rowByteCount: Int { width * format.bytesPerPixel }

    /// The bytes from the first pixel to the end of the last row's pixels.
    var byteCount: Int { (height - 1) * bytesPerRow + rowByteCount }

    /// Creates a zero-filled (black, transparent) buffer with packed rows.
    ///
    /// - Parameters:
    ///   - width: The number of columns, 1 or more.
    ///   - height: The number of rows, 1 or more.
    ///   - format: The pixel layout.
    /// - Throws: ``ImageError/invalidSize(width:height:)`` for a size under 1x1 or too large to
    ///   address; ``ImageError/outOfMemory(byteCount:)`` if the memory cannot be allocated.
    public init(width: Int, height: Int, format: PixelFormat) throws(ImageError) {
        try self.init(width: width, height: height, format: format, zeroed: true)
    }

    /// A buffer with packed rows whose bytes are zero, or left as they are for a caller that
    /// writes every byte before anything reads them (`zeroed: false`: the decoders).
    init(width: Int, height: Int, format: PixelFormat, zeroed: Bool) throws(ImageError) {
        let bytesPerRow = try Self.packedBytesPerRow(width: width, height: height, format: format)
        let (total, overflow) = bytesPerRow.multipliedReportingOverflow(by: height)
        guard !overflow else { throw .invalidSize(width: width, height: height) }
        self.width = width
        self.height = height
        self.format = format
        self.bytesPerRow = bytesPerRow
        self.storage = try PixelStorage.make(byteCount: total, zeroed: zeroed)
    }

    /// Creates a buffer from caller-provided pixels.
    ///
    /// - Parameters:
    ///   - width: The number of columns, 1 or more.
    ///   - height: The number of rows, 1 or more.
    ///   - format: The pixel layout of `bytes`.
    ///   - bytes: The pixels, row after row; `height` rows of `width * format.bytesPerPixel`
    ///     bytes each.
    /// - Throws: ``ImageError/invalidSize(width:height:)``, or
    ///   ``ImageError/bufferTooSmall(provided:required:)`` if `bytes` has fewer than
    ///   `width * height * format.bytesPerPixel` bytes.
    /// - Complexity: O(`width * height`).
    public init(width: Int, height: Int, format: PixelFormat, bytes: [UInt8]) throws(ImageError) {
        let bytesPerRow = try Self.packedBytesPerRow(width: width, height: height, format: format)
        let required = bytesPerRow * height
        guard bytes.count >= required else { throw .bufferTooSmall(provided: bytes.count, required: required) }
        let storage = try PixelStorage.make(byteCount: required)
        bytes.withUnsafeBytes { raw in
            if let source = raw.baseAddress { storage.base.copyMemory(from: source, byteCount: required) }
        }
        self.width = width
        self.height = height
        self.format = format
        self.bytesPerRow = bytesPerRow
        self.storage = storage
    }

    /// Creates a buffer by copying pixels whose rows are `bytesPerRow` apart.
    ///
    /// Use it for a camera frame with padded rows, for example. The copy keeps the same stride.
    ///
    /// - Parameters:
    ///   - width: The number of columns, 1 or more.
    ///   - height: The number of rows, 1 or more.
    ///   - format: The pixel layout of `bytes`.
    ///   - bytesPerRow: The stride of `bytes`, at least `width * format.bytesPerPixel`.
    ///   - bytes: The source memory; only read during the call.
    /// - Throws: ``ImageError/invalidSize(width:height:)`` for a bad size or stride, or
    ///   ``ImageError/bufferTooSmall(provided:required:)`` when `bytes` is too short.
    /// - Complexity: O(`height * bytesPerRow`).
    public init(
        width: Int, height: Int, format: PixelFormat, bytesPerRow: Int, copying bytes: UnsafeRawBufferPointer
    ) throws(ImageError) {
        let packed = try Self.packedBytesPerRow(width: width, height: height, format: format)
        guard bytesPerRow >= packed else { throw .invalidSize(width: width, height: height) }
        let (rows, overflow) = (height - 1).multipliedReportingOverflow(by: bytesPerRow)
        guard !overflow, rows <= Int.max - packed else { throw .invalidSize(width: width, height: height) }
        let required = rows + packed
        guard bytes.count >= required, let source = bytes.baseAddress else {
            throw .bufferTooSmall(provided: bytes.count, required: required)
        }
        self.width = width
        self.height = height
        self.format = format
        self.bytesPerRow = bytesPerRow
        self.storage = try PixelStorage.make(byteCount: required)
        storage.base.copyMemory(from: source, byteCount: required)
    }

    /// A buffer over already allocated storage (used by the decoders and transforms).
    init(uncheckedWidth width: Int, height: Int, format: PixelFormat, bytesPerRow: Int, storage: PixelStorage) {
        precondition(
            width > 0 && height > 0 && bytesPerRow >= width * format.bytesPerPixel
                && storage.capacity >= (height - 1) * bytesPerRow + width * format.bytesPerPixel,
            "PixelBuffer storage does not hold the pixels it claims.")
        self.width = width
        self.height = height
        self.format = format
        self.bytesPerRow = bytesPerRow
        self.storage = storage
    }

    /// The packed row size for a valid size, or throws ``ImageError/invalidSize(width:height:)``.
    static func packedBytesPerRow(width: Int, height: Int, format: PixelFormat) throws(ImageError) -> Int {
        guard width > 0, height > 0 else { throw .invalidSize(width: width, height: height) }
        let (row, overflow) = width.multipliedReportingOverflow(by: format.bytesPerPixel)
        guard !overflow, !row.multipliedReportingOverflow(by: height).overflow else {
            throw .invalidSize(width: width, height: height)
        }
        return row
    }

    /// Gives the buffer its own storage if it shares it.
    mutating func makeUnique() {
        guard !isKnownUniquelyReferenced(&storage) else { return }
        guard let copy = PixelStorage(byteCount: byteCount) else {
            preconditionFailure("Out of memory while copying a \(width)x\(height) PixelBuffer before writing.")
        }
        copy.base.copyMemory(from: storage.base, byteCount: byteCount)
        storage = copy
    }

    /// Makes the buffer `width` x `height` of `format` with packed rows.
    ///
    /// Reuses its memory when it is uniquely referenced and large enough. The pixel values are
    /// unspecified.
    mutating func reshape(width: Int, height: Int, format: PixelFormat) throws(ImageError) {
        let row = try Self.packedBytesPerRow(width: width, height: height, format: format)
        if isKnownUniquelyReferenced(&storage), storage.capacity >= row * height {
            self.width = width
            self.height = height
            self.format = format
            self.bytesPerRow = row
            return
        }
        self = try PixelBuffer(width: width, height: height, format: format)
    }

    /// Calls `body` with the buffer's bytes: `(height - 1) * bytesPerRow + width * bytesPerPixel`
    /// of them, pixel (x, y) at offset `y * bytesPerRow + x * format.bytesPerPixel`.
    ///
    /// - Warning: Do not escape the pointer from the closure; it is valid only during the call.
    /// - Parameter body: A closure that reads the pixels.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let result = try body(UnsafeRawBufferPointer(start: storage.base, count: byteCount))
        withExtendedLifetime(storage) {}
        return result
    }

    /// Calls `body` with the buffer's bytes for writing, first copying them if they are shared.
    ///
    /// - Warning: Do not escape the pointer from the closure; it is valid only during the call.
    /// - Parameter body: A closure that reads and writes the pixels (same layout as
    ///   ``withUnsafeBytes(_:)``).
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public mutating func withUnsafeMutableBytes<Result, Failure: Error>(
        _ body: (UnsafeMutableRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        makeUnique()
        let result = try body(UnsafeMutableRawBufferPointer(start: storage.base, count: byteCount))
        withExtendedLifetime(storage) {}
        return result
    }

    /// The channel values of one pixel, in the buffer's channel order.
    ///
    /// - Parameters:
    ///   - x: The column, `0..<width`.
    ///   - y: The row, `0..<height`.
    /// - Returns: `format.bytesPerPixel` values.
    /// - Complexity: O(1).
    public func pixel(x: Int, y: Int) -> [UInt8] {
        precondition(x >= 0 && x < width && y >= 0 && y < height, "Pixel (\(x), \(y)) is outside \(size).")
        let start = y * bytesPerRow + x * format.bytesPerPixel
        return (0..<format.bytesPerPixel).map { storage.base.load(fromByteOffset: start + $0, as: UInt8.self) }
    }

    /// One channel value of one pixel.
    ///
    /// - Parameters:
    ///   - x: The column, `0..<width`.
    ///   - y: The row, `0..<height`.
    ///   - channel: The byte within the pixel, `0..<format.bytesPerPixel`.
    /// - Complexity: O(1); writing may first copy shared storage (O(`width * height`)).
    public subscript(x x: Int, y y: Int, channel channel: Int) -> UInt8 {
        get {
            precondition(checkIndex(x: x, y: y, channel: channel), "Pixel (\(x), \(y)) channel \(channel) is outside.")
            return storage.base.load(
                fromByteOffset: y * bytesPerRow + x * format.bytesPerPixel + channel, as: UInt8.self)
        }
        set {
            precondition(checkIndex(x: x, y: y, channel: channel), "Pixel (\(x), \(y)) channel \(channel) is outside.")
            makeUnique()
            storage.base.storeBytes(
                of: newValue, toByteOffset: y * bytesPerRow + x * format.bytesPerPixel + channel, as: UInt8.self)
        }
    }

    private func checkIndex(x: Int, y: Int, channel: Int) -> Bool {
        x >= 0 && x < width && y >= 0 && y < height && channel >= 0 && channel < format.bytesPerPixel
    }

    /// The pixels without row padding: `width * height * format.bytesPerPixel` bytes, row after row.
    ///
    /// - Complexity: O(`width * height`).
    public var packedBytes: [UInt8] {
        let row = rowByteCount
        return [UInt8](unsafeUninitializedCapacity: row * height) { out, count in
            guard let destination = out.baseAddress else { return }
            for y in 0..<height {
                (destination + y * row).update(
                    from: (storage.base + y * bytesPerRow).assumingMemoryBound(to: UInt8.self), count: row)
            }
            count = row * height
        }
    }
}

extension PixelBuffer: Equatable {
    /// Whether two buffers have the same size, format and pixel values (row padding is ignored).
    ///
    /// - Complexity: O(`width * height`).
    public static func == (lhs: PixelBuffer, rhs: PixelBuffer) -> Bool {
        guard lhs.width == rhs.width, lhs.height == rhs.height, lhs.format == rhs.format else { return false }
        if lhs.storage === rhs.storage, lhs.bytesPerRow == rhs.bytesPerRow { return true }
        let row = lhs.rowByteCount
        for y in 0..<lhs.height
        where memcmp(lhs.storage.base + y * lhs.bytesPerRow, rhs.storage.base + y * rhs.bytesPerRow, row) != 0 {
            return false
        }
        return true
    }
}

extension PixelBuffer: CustomStringConvertible {
    /// `PixelBuffer(640x480 bgra32)`.
    public var description: String { "PixelBuffer(\(width)x\(height) \(format))" }
}
