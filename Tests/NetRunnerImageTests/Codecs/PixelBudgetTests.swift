import Foundation
import NetRunnerTestSupport
import Synchronization
import Testing

@testable import NetRunnerImage

/// Issue 43, finding 7: admission by megapixels. Large photos share a budget of pixels decoded
/// at once; small ones never wait.
@Suite("The pixel budget of large decodes")
struct PixelBudgetTests {
    final class Tracker: Sendable {
        let counts = Mutex((now: 0, most: 0))
    }

    @Test("Large decodes never hold more than the capacity at once; small ones are not counted")
    func bounded() async {
        let budget = PixelBudget(capacity: 5_000_000, threshold: 1_000_000)
        let inUse = Tracker()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<8 {
                group.addTask {
                    let pixels = index % 2 == 0 ? 2_000_000 : 500_000
                    let held = budget.acquire(pixels)
                    #expect(held == (pixels > 1_000_000 ? pixels : 0))
                    inUse.counts.withLock {
                        $0.now += held
                        $0.most = max($0.most, $0.now)
                    }
                    usleep(30_000)
                    inUse.counts.withLock { $0.now -= held }
                    budget.release(held)
                }
            }
        }
        let most = inUse.counts.withLock { $0.most }
        #expect(most <= 5_000_000 && most >= 2_000_000, "\(most)")
        #expect(budget.statistics.peak <= 5_000_000)
        #expect(budget.acquire(5_000_000) == 5_000_000, "all of it is free again")
        budget.release(5_000_000)
        // A photo larger than the capacity takes all of it rather than waiting forever.
        #expect(budget.acquire(50_000_000) == 5_000_000)
        budget.release(5_000_000)
    }

    @Test("A decode holds its share from its header until it returns, and gives it back on failure")
    func decodesHoldTheirShare() throws {
        let budget = PixelBudget(capacity: 1_000_000, threshold: 0)
        let context = DecodeContext(source: "test", format: .png, options: DecodingOptions())
        context.admitted.budget = budget
        try context.checkSize(width: 500, height: 400)
        #expect(context.admitted.pixels == 200_000 && budget.statistics.peak == 200_000)
        try context.checkSize(width: 1000, height: 500)  // a second, larger size (a HEIF grid)
        #expect(context.admitted.pixels == 500_000 && budget.statistics.peak == 500_000)
        #expect(throws: ImageError.self) { try context.checkSize(width: 20_000, height: 20_000) }
        context.admitted.end()
        #expect(budget.acquire(1_000_000) == 1_000_000)
        budget.release(1_000_000)
    }
}
