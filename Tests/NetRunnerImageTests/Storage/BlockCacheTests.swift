import Testing

@testable import NetRunnerImage

/// Large pixel blocks are kept for the next image instead of going back to the kernel, within
/// limits; what comes back zeroed is zero, whatever the block held.
@Suite("Pixel memory reuse", .serialized)
struct BlockCacheTests {
    @Test("A freed large block is handed to the next allocation that fits, zeroed when asked")
    func reuse() throws {
        let size = 3 << 20
        var first: UnsafeMutableRawPointer?
        do {
            let storage = try #require(PixelStorage(byteCount: size))
            first = storage.base
            storage.base.storeBytes(of: 0xAB, as: UInt8.self)
        }
        // Other tests allocate too: the block is either handed out again here, or taken by them.
        let again = try #require(PixelStorage(byteCount: size - 4096))
        if again.base == first {
            #expect(again.capacity >= size)
        }
        #expect(again.base.load(as: UInt8.self) == 0, "zeroed by default")
        #expect(PixelStorage(byteCount: 1000)!.capacity == 1024, "small blocks are not cached")
    }

    @Test("Blocks are kept within the limits: not tiny, not more than 4, not over 512 MiB")
    func limits() {
        #expect(BlockCache.take(atLeast: 1000) == nil)
        let huge = BlockCache.maximumBytes + 64
        #expect(!BlockCache.keep(UnsafeMutableRawPointer(bitPattern: 64)!, capacity: huge), "too large to keep")
        #expect(!BlockCache.keep(UnsafeMutableRawPointer(bitPattern: 64)!, capacity: 4096), "too small to keep")
        // A block 8 times the request is not handed out for it.
        let big = PixelStorage(byteCount: 16 << 20, zeroed: false)
        let base = big?.base
        _ = consume big
        let small = PixelStorage(byteCount: 1 << 20, zeroed: false)
        #expect(small?.base != base)
    }
}
