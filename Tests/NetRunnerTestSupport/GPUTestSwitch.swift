import Foundation
public import Testing

/// Whether this test process runs the GPU tests at all.
///
/// `make test-asan` sets `NETRUNNER_TEST_GPU=off`: the GPU tests run once, in `make test`,
/// because under AddressSanitizer lavapipe's shader compiler allocates through the sanitizer's
/// allocator and its suites became the run's longest (79 of 90 s), while the Swift code they
/// exercise is the CPU tests' own.
public enum GPUTestSwitch {
    /// `true` when `NETRUNNER_TEST_GPU=off`.
    public static var isOff: Bool { ProcessInfo.processInfo.environment["NETRUNNER_TEST_GPU"] == "off" }

    /// The skip note when off.
    public static let offReason: Comment =
        "NETRUNNER_TEST_GPU=off (make test-asan): the GPU tests run in make test"
}
