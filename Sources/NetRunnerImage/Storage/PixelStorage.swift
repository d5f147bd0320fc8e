// The one place NetRunnerImage allocates pixel memory.
//
// Invariants: `base` is 64-byte aligned and points to `capacity` bytes owned by this object,
// released exactly once in `deinit` (freed, or handed to `BlockCache` which then owns it).
// `capacity` is a multiple of 64 and at least 64. The memory is zero-filled when allocated,
// unless the caller asked for it unfilled because it writes every byte (the decoders). Nothing
// else frees or reallocates `base`.

import Synchronization

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

    /// Allocates at least `byteCount` bytes, zeroed unless `zeroed` is `false` (for a caller
    /// that writes every byte); `nil` when memory is exhausted or `byteCount` is absurd.
    init?(byteCount: Int, zeroed: Bool = true) {
        guard byteCount >= 0, byteCount <= Int.max - 2 * Self.alignment else { return nil }
        let rounded = max((byteCount + Self.alignment - 1) / Self.alignment * Self.alignment, Self.alignment)
        if let block = BlockCache.take(atLeast: rounded) {
            base = block.base
            capacity = block.capacity
        } else {
            guard let pointer = aligned_alloc(Self.alignment, rounded) else { return nil }
            base = pointer
            capacity = rounded
        }
        if zeroed { memset(base, 0, capacity) }
    }

    /// Allocates or throws ``ImageError/outOfMemory(byteCount:)``.
    static func make(byteCount: Int, zeroed: Bool = true) throws(ImageError) -> PixelStorage {
        guard let storage = PixelStorage(byteCount: byteCount, zeroed: zeroed) else {
            throw .outOfMemory(byteCount: byteCount)
        }
        return storage
    }

    deinit {
        if !BlockCache.keep(base, capacity: capacity) { free(base) }
    }
}

/// A few large freed blocks kept for the next image of about the same size.
///
/// Decoding a photo needs one block the size of its pixels (megabytes). Freed and allocated
/// again for every image, each would come back from the kernel as fresh pages: a page fault per
/// 4 KiB and a zeroing pass before the decoder writes a byte (measured: about 10% of `bulk`'s
/// time on 1-12 MP photos). Blocks of 1 MiB or more are kept instead, at most 4 and 512 MiB in
/// all, and a request takes the smallest that fits if it is at most 4 times the request.
enum BlockCache {
    typealias Block = BlockPool.Block

    static let smallest = 1 << 20
    static let maximumBlocks = 4
    static let maximumBytes = 512 << 20

    private static let pool = Mutex(BlockPool(maximumBlocks: maximumBlocks, maximumBytes: maximumBytes))

    /// The smallest kept block of at least `byteCount` bytes (and at most 4 times that), now
    /// the caller's; `nil` when none fits.
    static func take(atLeast byteCount: Int) -> Block? {
        guard byteCount >= smallest else { return nil }
        return pool.withLock { $0.take(atLeast: byteCount) }
    }

    /// Keeps a freed block when it is large and there is room; `false` when the caller must free it.
    static func keep(_ base: UnsafeMutableRawPointer, capacity: Int) -> Bool {
        guard capacity >= smallest, capacity <= maximumBytes else { return false }
        let evicted = pool.withLock { $0.keep(Block(base: base, capacity: capacity)) }
        for block in evicted { free(block.base) }
        return true
    }
}

/// The blocks ``BlockCache`` keeps and how it chooses among them, as a value (the cache holds
/// one under its lock; a test holds its own, which no other test touches).
struct BlockPool {
    /// A block of memory no storage owns.
    struct Block {
        var base: UnsafeMutableRawPointer
        var capacity: Int
    }

    /// At most this many blocks are kept.
    let maximumBlocks: Int
    /// At most this many bytes in all are kept.
    let maximumBytes: Int
    /// The blocks kept.
    private(set) var blocks: [Block] = []

    init(maximumBlocks: Int, maximumBytes: Int) {
        (self.maximumBlocks, self.maximumBytes) = (maximumBlocks, maximumBytes)
    }

    /// The smallest kept block of at least `byteCount` bytes and at most 4 times that, taken
    /// out of the pool; `nil` when none fits.
    mutating func take(atLeast byteCount: Int) -> Block? {
        var best: Int?
        for (index, block) in blocks.enumerated() where block.capacity >= byteCount && block.capacity / 4 <= byteCount {
            if best.map({ block.capacity < blocks[$0].capacity }) ?? true { best = index }
        }
        return best.map { blocks.remove(at: $0) }
    }

    /// Keeps `block`; returns the blocks dropped to stay within the limits (the smallest first:
    /// the largest are the costly ones to fault in), for the caller to free.
    mutating func keep(_ block: Block) -> [Block] {
        blocks.append(block)
        var evicted: [Block] = []
        while blocks.count > maximumBlocks || blocks.reduce(0, { $0 + $1.capacity }) > maximumBytes {
            let smallestIndex = blocks.indices.min { blocks[$0].capacity < blocks[$1].capacity } ?? 0
            evicted.append(blocks.remove(at: smallestIndex))
        }
        return evicted
    }
}

// Sendable: the cache holds blocks no PixelStorage owns any more; each is handed to one owner.
extension BlockPool.Block: @unchecked Sendable {}

// Sendable: a PixelStorage is only written through a PixelBuffer that holds the only
// reference to it (copy-on-write, checked with isKnownUniquelyReferenced), so a storage
// reachable from two threads is never written.
extension PixelStorage: @unchecked Sendable {}
