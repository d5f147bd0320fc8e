import Testing

@testable import NetRunnerSupport

/// What a build says it is: `0.2.0 (62e46ba)`, the release and the commit it was built from.
@Suite("BuildVersion")
struct BuildVersionTests {
    @Test("The release and the commit (or unknown, for a build not told which)")
    func releaseAndCommit() {
        #expect(BuildVersion.release == "0.2.0")
        let commit = BuildVersion.commit
        #expect(
            commit == "unknown"
                || ((7...40).contains(commit.count) && commit.allSatisfy { "0123456789abcdef".contains($0) }),
            "\(commit)")
        #expect(BuildVersion.description == "0.2.0 (\(commit))")
    }
}
