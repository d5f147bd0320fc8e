import Testing

@testable import NetRunnerImage

/// Large pixel blocks are kept for the next image instead of going back to the kernel, within
/// limits; what comes back zeroed is zero, whatever the block held.
@Suite("Pixel memory reuse", .serialized)
struct BlockCacheTests {
    @Test("A freed large block is handed to the next allocation that fits, zeroed when asked")
    func reuse() throws {
        let size = 3 << 20
        // Other tests allocate too: a freed block is handed out again here, or taken by them, and
        // then what comes is a fresh block of the size asked, which malloc may place at the same
        // address (CI saw one: the address alone does not tell). So: a few tries, and at least one
        // must get the freed block back, whole; every one comes zeroed.
        var reused = 0
        for _ in 0..<20 where reused == 0 {
            var first: UnsafeMutableRawPointer?
            do {
                let storage = try #require(PixelStorage(byteCount: size))
                first = storage.base
                storage.base.storeBytes(of: 0xAB, as: UInt8.self)
            }
            let again = try #require(PixelStorage(byteCount: size - 4096))
            if again.base == first, again.capacity >= size { reused += 1 }
            #expect(again.capacity >= size - 4096)
            #expect(again.base.load(as: UInt8.self) == 0, "zeroed by default")
        }
        #expect(reused == 1, "no freed block was handed out again in 20 tries")
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
