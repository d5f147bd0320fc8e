// The one place NetRunnerImage allocates pixel memory.
//
// Invariants: `base` is 64-byte aligned and points to `capacity` bytes owned by this object,
// freed exactly once in `deinit`. `capacity` is a multiple of 64 and at least 64. The memory is
// zero-filled when allocated. Nothing else frees or reallocates `base`.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An owned, 64-byte aligned block of pixel bytes: the storage behind ``PixelBuffer``.
///
/// - Note: Not thread-safe by itself; ``PixelBuffer`` copies it before writing when it is
///   shared (copy-on-write), so it is only ever mutated through a uniquely referenced buffer.
final class PixelStorage {
    static let alignment = 64

    let base: UnsafeMutableRawPointer
    let capacity: Int

    /// Allocates at least `byteCount` zeroed bytes; `nil` when memory is exhausted or
    /// `byteCount` is absurd.
    init?(byteCount: Int) {
        guard byteCount >= 0, byteCount <= Int.max - 2 * Self.alignment else { return nil }
        let rounded = max((byteCount + Self.alignment - 1) / Self.alignment * Self.alignment, Self.alignment)
        guard let pointer = aligned_alloc(Self.alignment, rounded) else { return nil }
        memset(pointer, 0, rounded)
        base = pointer
        capacity = rounded
    }

    /// Allocates or throws ``ImageError/outOfMemory(byteCount:)``.
    static func make(byteCount: Int) throws(ImageError) -> PixelStorage {
        guard let storage = PixelStorage(byteCount: byteCount) else { throw .outOfMemory(byteCount: byteCount) }
        return storage
    }

    deinit { free(base) }
}

// Sendable: a PixelStorage is only written through a PixelBuffer that holds the only
// reference to it (copy-on-write, checked with isKnownUniquelyReferenced), so a storage
// reachable from two threads is never written.
extension PixelStorage: @unchecked Sendable {}
