import Testing

@testable import NetRunnerImage

/// Large pixel blocks are kept for the next image instead of going back to the kernel, within
/// limits; what comes back zeroed is zero, whatever the block held.
@Suite("Pixel memory reuse", .serialized)
struct BlockCacheTests {
    @Test("A freed large block is handed to the next allocation that fits, zeroed when asked")
    func reuse() throws {
        let size = 3 << 20
        // The cache is the process's, and other tests allocate and free beside this one: a freed
        // block is handed out again here, or taken by them, or not kept at all (the cache held
        // its 4 already: CI saw 0 reuses in 20 tries); and a fresh block of the size asked may
        // sit at the freed one's address (CI saw that too). What holds whatever they do: a block
        // at that address is the freed one, whole, or a fresh one of the size asked, and every
        // block comes zeroed. How often the freed block came back is printed.
        var reused = 0
        for _ in 0..<20 {
            var first: UnsafeMutableRawPointer?
            do {
                let storage = try #require(PixelStorage(byteCount: size))
                first = storage.base
                storage.base.storeBytes(of: 0xAB, as: UInt8.self)
            }
            let again = try #require(PixelStorage(byteCount: size - 4096))
            if again.base == first {
                #expect(again.capacity >= size || again.capacity == size - 4096, "capacity \(again.capacity)")
                if again.capacity >= size { reused += 1 }
            }
            #expect(again.capacity >= size - 4096)
            #expect(again.base.load(as: UInt8.self) == 0, "zeroed by default")
        }
        print("Pixel memory reuse: the freed block came back in \(reused) of 20 rounds")
        #expect(PixelStorage(byteCount: 1000)!.capacity == 1024, "small blocks are not cached")
    }

    @Test("A pool hands a kept block to the next request that fits, the smallest first, evicting the smallest")
    func pool() {
        // Fake addresses: a pool only stores and returns them (nothing here is freed).
        func block(_ address: Int, _ capacity: Int) -> BlockPool.Block {
            BlockPool.Block(base: UnsafeMutableRawPointer(bitPattern: address)!, capacity: capacity)
        }
        var pool = BlockPool(maximumBlocks: 3, maximumBytes: 100 << 20)
        #expect(pool.keep(block(0x1000, 3 << 20)).isEmpty)
        // The freed block, for a request that fits it.
        #expect(pool.take(atLeast: (3 << 20) - 4096)?.base == UnsafeMutableRawPointer(bitPattern: 0x1000))
        #expect(pool.take(atLeast: 1 << 20) == nil, "taken: the pool is empty")
        // The smallest that fits, and none more than 4 times the request.
        #expect(pool.keep(block(0x2000, 8 << 20)).isEmpty && pool.keep(block(0x3000, 4 << 20)).isEmpty)
        #expect(pool.take(atLeast: 3 << 20)?.capacity == 4 << 20)
        #expect(pool.take(atLeast: 1 << 20) == nil, "8 MiB is more than 4 times 1 MiB")
        // Past the limits the smallest go: a fourth block, then one over 100 MiB in all.
        #expect(pool.keep(block(0x4000, 2 << 20)).isEmpty && pool.keep(block(0x5000, 5 << 20)).isEmpty)
        #expect(pool.keep(block(0x6000, 6 << 20)).map(\.capacity) == [2 << 20])
        #expect(pool.keep(block(0x7000, 90 << 20)).map(\.capacity) == [5 << 20, 6 << 20])
        #expect(pool.blocks.map(\.capacity).sorted() == [8 << 20, 90 << 20])
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
