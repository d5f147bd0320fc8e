import Foundation

/// How many of a fuzz test's mutants this test process tries.
///
/// All of them unless `NETRUNNER_FUZZ_SHARE` says a share, a number above 0 and at most 1: `make
/// test` tries a quarter (the first quarter of the same seeded sequence), because `make
/// test-asan` and CI's sanitized run try every one under AddressSanitizer, which finds all a
/// plain run finds (a trap, a wrong outcome) and memory errors besides. Anything else in the
/// variable is ignored: every mutant.
public enum FuzzShare {
    /// The share set, 1 when none (or no number in range) is.
    public static var share: Double {
        guard let text = ProcessInfo.processInfo.environment["NETRUNNER_FUZZ_SHARE"], let share = Double(text),
            share > 0, share <= 1
        else { return 1 }
        return share
    }

    /// The mutants of `full` to try: at least one.
    public static func count(_ full: Int) -> Int {
        max(1, Int((Double(full) * share).rounded(.up)))
    }
}
