import Testing

@testable import NetRunnerEvaluation

/// The report's charts: axes that end on a round value above the data.
@Suite("Report charts")
struct ReportChartTests {
    @Test("The latency axis ends on 1, 2, 2.5 or 5 times a power of ten, at or above the slowest run")
    func niceCeiling() {
        // Before, the axis ended at the slowest maximum itself: its whisker sat on the edge.
        #expect(HTMLReport.niceCeiling(9.2 * 1.05) == 10)
        #expect(HTMLReport.niceCeiling(4.2) == 5)
        #expect(HTMLReport.niceCeiling(2.1) == 2.5)
        #expect(HTMLReport.niceCeiling(2) == 2)
        #expect(HTMLReport.niceCeiling(0.013) == 0.02)
        #expect(HTMLReport.niceCeiling(1234) == 2000)
        #expect(HTMLReport.niceCeiling(0) == 1 && HTMLReport.niceCeiling(.infinity) == 1)
    }
}
