import Foundation
import NetRunnerTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `bulk --shard I/N` and `bulk merge`: a run split over processes (machines, Kubernetes
/// Indexed Job pods) gives the file one machine writes.
@Suite("netrunner bulk, sharded", .serialized)
struct ShardCommandTests {
    /// A folder of real photos in sub-folders: the committed photos, copied `copies` times.
    func photoFolder(in folder: TemporaryFolder, copies: Int = 2) throws -> String {
        let root = folder.path("photos")
        let sources = Fixtures.path("Tests/Fixtures/Photos")
        for copy in 0..<copies {
            for sub in ["test", "calibration", "faces"] {
                let target = root + "/set-\(copy)/" + sub
                try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
                for name in try FileManager.default.contentsOfDirectory(atPath: sources + "/" + sub)
                where name.hasSuffix(".jpg") || name.hasSuffix(".png") {
                    try FileManager.default.copyItem(
                        atPath: sources + "/" + sub + "/" + name, toPath: target + "/" + name)
                }
            }
        }
        return root
    }

    func netrunner(_ arguments: [String], environment: [String: String?] = [:]) throws -> ProcessResult {
        try ProcessResult.run(Fixtures.netrunner, arguments, environment: environment)
    }

    /// The lines of a results file without their latencies (which differ run to run).
    func answers(_ path: String) throws -> [String] { try ResultsLines.withoutLatencies(path) }

    @Test(
        "Three shard processes at once, merged: the single run's file, line for line; the merged file resumes as done")
    func shardsEqualOneRun() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-shards")
        defer { folder.remove() }
        let photos = try photoFolder(in: folder)
        let single = try netrunner(["bulk", photos, "--no-progress", "--output", folder.path("single.jsonl")])
        #expect(single.status == 0, "\(single.stderr)")

        // Three processes side by side, as three pods would run.
        let group = DispatchGroup()
        let results = Locked<[Int: ProcessResult]>([:])
        for index in 0..<3 {
            DispatchQueue.global().async(group: group) {
                let run = try? ProcessResult.run(
                    Fixtures.netrunner,
                    [
                        "bulk", photos, "--no-progress", "--threads", "1", "--shard", "\(index)/3", "--output",
                        folder.path("shard-\(index).jsonl"),
                    ])
                results.update { $0[index] = run }
            }
        }
        group.wait()
        var counts: [Int] = []
        for index in 0..<3 {
            let run = try #require(results.value[index])
            #expect(run.status == 0, "\(run.stderr)")
            counts.append(try answers(folder.path("shard-\(index).jsonl")).count)
        }
        let total = try answers(folder.path("single.jsonl")).count
        #expect(counts.reduce(0, +) == total && counts.allSatisfy { $0 > 0 }, "\(counts) of \(total)")

        let merge = try netrunner([
            "bulk", "merge", folder.path("shard-2.jsonl"), folder.path("shard-0.jsonl"), folder.path("shard-1.jsonl"),
            "--output", folder.path("merged.jsonl"),
        ])
        #expect(merge.status == 0, "\(merge.stderr)")
        #expect(merge.stderr.contains("Merged 3 shards into"), "\(merge.stderr)")
        #expect(try answers(folder.path("merged.jsonl")) == answers(folder.path("single.jsonl")))
        // The merged file is the whole run's: resuming it finds nothing to do.
        let resumed = try netrunner(["bulk", photos, "--no-progress", "--output", folder.path("merged.jsonl")])
        #expect(resumed.status == 0 && resumed.stderr.contains("0 of \(total) images to go"), "\(resumed.stderr)")
        // A Kubernetes Indexed Job's pod: the index from the environment, the count from the manifest.
        let pod = try netrunner(
            ["bulk", photos, "--no-progress", "--threads", "1", "--output", folder.path("pod-1.jsonl")],
            environment: ["JOB_COMPLETION_INDEX": "1", "JOB_COMPLETION_COUNT": "3"])
        #expect(pod.status == 0 && pod.stderr.contains("Shard 1/3: \(counts[1]) of \(total) images"), "\(pod.stderr)")
    }

    @Test("A shard killed mid-run resumes where it stopped; the merge still equals the single run")
    func killedShard() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-shards")
        defer { folder.remove() }
        let photos = try photoFolder(in: folder, copies: 6)
        let single = try netrunner(["bulk", photos, "--no-progress", "--output", folder.path("single.jsonl")])
        #expect(single.status == 0)
        for index in [0, 2] {
            let run = try netrunner([
                "bulk", photos, "--no-progress", "--shard", "\(index)/3", "--output",
                folder.path("shard-\(index).jsonl"),
            ])
            #expect(run.status == 0)
        }
        // Shard 1 on one thread, killed (-9) once some of its lines are written.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixtures.netrunner)
        process.arguments = [
            "bulk", photos, "--no-progress", "--threads", "1", "--shard", "1/3", "--output",
            folder.path("shard-1.jsonl"),
        ]
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let written = (try? String(contentsOfFile: folder.path("shard-1.jsonl"), encoding: .utf8)) ?? ""
            if written.split(separator: "\n").count >= 3 { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let before = try answers(folder.path("shard-1.jsonl")).count
        // The rerun finds the lines the killed process wrote and runs only the rest.
        let rerun = try netrunner([
            "bulk", photos, "--no-progress", "--shard", "1/3", "--output", folder.path("shard-1.jsonl"),
        ])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(rerun.stderr.contains("Resuming") && before > 0, "\(rerun.stderr)")
        let merge = try netrunner([
            "bulk", "merge", folder.path("shard-0.jsonl"), folder.path("shard-1.jsonl"), folder.path("shard-2.jsonl"),
            "--output", folder.path("merged.jsonl"),
        ])
        #expect(merge.status == 0, "\(merge.stderr)")
        #expect(try answers(folder.path("merged.jsonl")) == answers(folder.path("single.jsonl")))
        // A shard rerun as another shard is refused: its file belongs to shard 1.
        let wrong = try netrunner([
            "bulk", photos, "--no-progress", "--shard", "2/3", "--output", folder.path("shard-1.jsonl"),
        ])
        #expect(wrong.status == 1 && wrong.stderr.contains("--shard (1/3; now 2/3)"), "\(wrong.stderr)")
    }

    @Test("Merges that would not be one run are refused, naming the file; nothing is written")
    func refusedMerges() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-shards")
        defer { folder.remove() }
        let photos = Fixtures.path("Tests/Fixtures/Photos/test")
        for index in 0..<2 {
            let run = try netrunner([
                "bulk", photos, "--no-progress", "--shard", "\(index)/2", "--output", folder.path("s\(index).jsonl"),
            ])
            #expect(run.status == 0)
        }
        let other = try netrunner([
            "bulk", photos, "--no-progress", "--shard", "1/2", "--max-results", "2", "--output",
            folder.path("o1.jsonl"),
        ])
        #expect(other.status == 0)
        let whole = try netrunner(["bulk", photos, "--no-progress", "--output", folder.path("whole.jsonl")])
        #expect(whole.status == 0)
        let merged = folder.path("merged.jsonl")
        func merge(_ files: [String]) throws -> ProcessResult {
            try netrunner(["bulk", "merge"] + files.map { folder.path($0) } + ["--output", merged])
        }
        let missing = try merge(["s0.jsonl"])
        #expect(missing.status == 1 && missing.stderr.contains("shard 1/2 is missing"), "\(missing.stderr)")
        let twice = try merge(["s0.jsonl", "s0.jsonl", "s1.jsonl"])
        #expect(twice.status == 1 && twice.stderr.contains("shard 0/2 is also in"), "\(twice.stderr)")
        let mixed = try merge(["s0.jsonl", "o1.jsonl"])
        #expect(mixed.status == 1 && mixed.stderr.contains("o1.jsonl: cannot merge it: it is from another run"))
        #expect(mixed.stderr.contains("--max-results"), "\(mixed.stderr)")
        let notShard = try merge(["s0.jsonl", "whole.jsonl"])
        #expect(notShard.status == 1 && notShard.stderr.contains("holds a whole run, not a shard"))
        // A line moved into the wrong shard's file.
        let s0 = try String(contentsOfFile: folder.path("s0.jsonl"), encoding: .utf8)
        let s1 = try String(contentsOfFile: folder.path("s1.jsonl"), encoding: .utf8)
        try (s0 + s1.split(separator: "\n")[0] + "\n").write(
            toFile: folder.path("s0.jsonl"), atomically: true, encoding: .utf8)
        let moved = try merge(["s0.jsonl", "s1.jsonl"])
        #expect(moved.status == 1 && moved.stderr.contains("belongs to shard 1/2"), "\(moved.stderr)")
        #expect(!FileManager.default.fileExists(atPath: merged))
        let bad = try netrunner(["bulk", photos, "--shard", "2/2"])
        #expect(bad.status != 0 && bad.stderr.contains("is not a shard"))
    }
}

/// A value shared between threads.
final class Locked<Value>: @unchecked Sendable {
    private var stored: Value
    private let lock = NSLock()

    init(_ value: Value) { stored = value }

    var value: Value { lock.withLock { stored } }

    func update(_ change: (inout Value) -> Void) { lock.withLock { change(&stored) } }
}
