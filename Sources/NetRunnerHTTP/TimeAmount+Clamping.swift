import NIOCore

extension TimeAmount {
    /// A duration in nanoseconds, the largest (or smallest) amount where it does not fit.
    init(clamping duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else {
            self = .nanoseconds(seconds < 0 ? .min : .max)
            return
        }
        let (sum, overflowed) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        self = .nanoseconds(overflowed ? (seconds < 0 ? .min : .max) : sum)
    }
}
