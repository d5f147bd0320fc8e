import Foundation
import NetRunnerTestSupport
import Testing

/// The files of `deploy/`: valid for the systems they are for, and saying the same as the tool.
@Suite("deploy/")
struct DeployTests {
    @Test(
        "The Kubernetes manifests pass Kubernetes 1.31's schemas (strict), and the Indexed Job's count is its completions"
    )
    func kubernetes() throws {
        let validator = Fixtures.path(".venv-test/bin/kubernetes-validate")
        try #require(FileManager.default.isExecutableFile(atPath: validator), "run scripts/setup-test-python.sh")
        let folder = Fixtures.path("deploy/kubernetes")
        let manifests = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".yaml") }
            .sorted()
        #expect(manifests == ["bulk-job.yaml", "bulk-merge-job.yaml", "hub.yaml", "serve.yaml"])
        let run = try ProcessResult.run(
            validator, ["-k", "1.31.0", "--strict"] + manifests.map { folder + "/" + $0 })
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.components(separatedBy: " passed for resource ").count - 1 == 11, "\(run.stdout)")

        let job = try String(contentsOfFile: folder + "/bulk-job.yaml", encoding: .utf8)
        let completions = job.firstMatch(of: /completions: (\d+)/).map { String($0.1) }
        let count = job.firstMatch(of: /name: JOB_COMPLETION_COUNT\n\s+value: "(\d+)"/).map { String($0.1) }
        #expect(completions != nil && completions == count, "completions \(completions ?? "-"), count \(count ?? "-")")
        #expect(job.contains("completionMode: Indexed"))
        #expect(job.contains("/data/results/shard-$(JOB_COMPLETION_INDEX).jsonl"))
    }
}
