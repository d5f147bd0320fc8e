// Memory that NetRunner hands to LiteRT: model bytes and tensor buffers.
//
// Invariants: `base` is 64-byte aligned, holds `capacity >= count` bytes (the slack lets
// XNNPACK read up to 16 bytes past the end), the bytes past `count` are zero, and the
// memory is freed exactly once, in `deinit`.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An owned, 64-byte aligned, zero-initialised block of bytes.
final class AlignedMemory {
    static let alignment = 64
    static let slack = 64

    let base: UnsafeMutableRawPointer
    /// The number of meaningful bytes.
    let count: Int

    /// Allocates `count` zeroed bytes (plus slack); returns `nil` if memory is exhausted.
    init?(count: Int) {
        precondition(count >= 0, "AlignedMemory cannot hold a negative number of bytes.")
        let rounded = (count + Self.slack + Self.alignment - 1) / Self.alignment * Self.alignment
        guard let pointer = aligned_alloc(Self.alignment, rounded) else { return nil }
        memset(pointer, 0, rounded)
        self.base = pointer
        self.count = count
    }

    /// Allocates a copy of `bytes`; returns `nil` if memory is exhausted.
    convenience init?(copying bytes: UnsafeRawBufferPointer) {
        self.init(count: bytes.count)
        if let source = bytes.baseAddress, bytes.count > 0 {
            base.copyMemory(from: source, byteCount: bytes.count)
        }
    }

    deinit { free(base) }
}
