import Foundation
import NetRunnerTestSupport
import Synchronization
import Testing

@testable import NetRunner
@testable import NetRunnerEvaluation

/// Bulk inference over a folder: answers in file order equal to one-at-a-time
/// classification (itself checked against Python), failures per file (the results file's tests
/// are `NetRunnerJobsTests`').
@Suite("Bulk inference")
struct BulkTests {
    static let photos = [
        "Tests/Fixtures/Photos/test/chelsea.png", "Tests/Fixtures/Photos/test/coffee.jpg",
        "Tests/Fixtures/Photos/test/eagle.jpg", "Tests/Fixtures/Photos/test/grace_hopper.jpg",
    ].map(Fixtures.path)
    static let expectedTop1 = ["Egyptian cat", "espresso", "bald eagle", "military uniform"]
    static let uint8Bundle = Fixtures.path("Models/bundles/mobilenet_v2_1.0_224_uint8.tiobundle")
    static let faceBundle = Fixtures.path("Models/bundles/face_detection_short_range.tiobundle")

    /// The photos with a truncated JPEG and a text file among them.
    func photosWithBadFiles(in folder: TemporaryFolder) throws -> [String] {
        let truncated = try folder.write(
            try Data(contentsOf: URL(fileURLWithPath: Self.photos[1])).prefix(3000), named: "truncated.jpg")
        let text = try folder.write(Data("not an image\n".utf8), named: "notes.png")
        return [Self.photos[0], truncated, Self.photos[1], text, Self.photos[2], Self.photos[3]]
    }

    @Test("Every thread count gives the answers of one-at-a-time classification, in file order", arguments: [1, 2])
    func answersInOrder(threads: Int) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let files = try photosWithBadFiles(in: folder)
        let outcomes = Mutex<[(Int, Result<ImageAnswer, BulkFailure>)]>([])
        try BulkInference.run(
            files: files, threads: threads,
            makeTask: { threadCount in
                var options = ImageTask.Options()
                options.threadCount = threadCount
                return try ImageTask(modelAt: Self.uint8Bundle, options: options)
            },
            deliver: { index, outcome in outcomes.withLock { $0.append((index, outcome)) } })
        let delivered = outcomes.withLock { $0 }
        #expect(delivered.map(\.0) == Array(files.indices))
        let single = try ImageClassifier(bundle: try ModelBundle(path: Self.uint8Bundle))
        var top1: [String] = []
        for (index, outcome) in delivered {
            switch outcome {
            case .success(.classification(let result)):
                let expected = try single.classify(fileAt: files[index])
                #expect(result.categories == expected.categories)
                top1.append(result.categories.first?.displayName ?? "")
            case .success(let other):
                Issue.record("a classifier answered \(other.kind)")
            case .failure(let failure):
                #expect(failure.message.contains(files[index]), "the error names the file: \(failure.message)")
                #expect(!failure.message.contains("\n"))
            }
        }
        #expect(top1 == Self.expectedTop1)
        #expect(delivered.filter { if case .failure = $0.1 { true } else { false } }.count == 2)
    }

    @Test("Cancelling stops new images and delivers no more", arguments: [1, 2])
    func cancellation(threads: Int) throws {
        let files = Array(repeating: Self.photos, count: 5).joined().map { $0 }
        let count = Atomic<Int>(0)
        try BulkInference.run(
            files: files, threads: threads,
            makeTask: { _ in try ImageTask(modelAt: Self.uint8Bundle) },
            isCancelled: { count.load(ordering: .relaxed) >= 3 },
            deliver: { _, _ in count.add(1, ordering: .relaxed) })
        let delivered = count.load(ordering: .relaxed)
        // Images already started, and those parked ahead of a slow one (at most 2 per thread),
        // are still delivered.
        #expect(delivered >= 3 && delivered <= 3 + 3 * threads, "delivered \(delivered)")
    }

    @Test("A detector bundle is loaded as a detector and finds Grace Hopper's face")
    func detectorTask() throws {
        let task = try ImageTask(modelAt: Self.faceBundle)
        #expect(task.kind == .detection)
        guard case .detection(let result) = try task.run(fileAt: Self.photos[3]) else {
            Issue.record("not a detection")
            return
        }
        #expect(result.detections.count == 1)
        // The face sits in the upper middle of the 512x600 portrait.
        let box = try #require(result.detections.first?.boundingBox)
        #expect(box.minX > 120 && box.maxX < 400 && box.minY > 100 && box.maxY < 400, "\(box)")
        #expect(ImageTask.kind(type: "image.classification.imagenet") == .classification)
        #expect(ImageTask.kind(type: "image.detection.face") == .detection)
        #expect(ImageTask.kind(type: "segmentation") == nil)
    }
}

/// How images are split into shards.
@Suite("Bulk shards")
struct BulkShardTests {
    @Test("Shards: balanced, stable when files are added, the same whatever the folder is mounted as")
    func assignment() throws {
        let count = 8
        let paths = (0..<20_000).map { "album-\($0 % 37)/IMG_\(String($0, radix: 16)).jpg" }
        var sizes = [Int](repeating: 0, count: count)
        for path in paths { sizes[BulkShard.shard(of: path, count: count)] += 1 }
        let even = paths.count / count
        #expect(sizes.allSatisfy { abs($0 - even) < even / 10 }, "\(sizes)")
        // Adding files moves no existing file.
        let shard = try BulkShard(parsing: "3/8")
        let before = paths.filter { shard.contains("/data/photos/" + $0, roots: ["/data/photos"]) }
        let added = paths + (0..<500).map { "new/\($0).jpg" }
        let after = added.filter { shard.contains("/data/photos/" + $0, roots: ["/data/photos/"]) }
        #expect(Set(before).isSubset(of: Set(after)))
        // Another mount point, the same split.
        let elsewhere = paths.filter { shard.contains("/mnt/nfs/photos/" + $0, roots: ["/mnt/nfs/photos"]) }
        #expect(before == elsewhere)
        #expect(throws: EvaluationError.badShard("8/8")) { try BulkShard(parsing: "8/8") }
        #expect(throws: EvaluationError.badShard("x")) { try BulkShard(parsing: "x") }
        #expect(try BulkShard(parsing: "0/1").contains("anything", roots: []))
    }

    /// The shard an environment names (`nil`: none), read from a dictionary.
    func shard(_ environment: [String: String], option: String? = nil) throws(EvaluationError) -> BulkShard? {
        try BulkShard.chosen(option: option, environment: { environment[$0] })
    }

    /// The reason a Slurm environment is refused ("" when it is not).
    func refusal(_ environment: [String: String]) -> String {
        do {
            _ = try shard(environment)
            return ""
        } catch {
            guard case .badShardEnvironment(let reason) = error else { return "\(error)" }
            return reason
        }
    }

    /// A task of `sbatch --array=MIN-MAX[:STEP]` (or a list of `count` tasks).
    func task(_ id: Int, min: Int, max: Int, step: Int = 1, count: Int? = nil) -> [String: String] {
        [
            "SLURM_ARRAY_JOB_ID": "41", "SLURM_ARRAY_TASK_ID": "\(id)", "SLURM_ARRAY_TASK_MIN": "\(min)",
            "SLURM_ARRAY_TASK_MAX": "\(max)", "SLURM_ARRAY_TASK_STEP": "\(step)",
            "SLURM_ARRAY_TASK_COUNT": "\(count ?? (max - min) / step + 1)",
        ]
    }

    @Test(
        "A Slurm array task: --shard first, then Kubernetes, then Slurm; NETRUNNER_SHARD_COUNT makes task IDs indices")
    func slurmArrayTask() throws {
        #expect(try shard([:]) == nil)
        #expect(try shard(["SLURM_JOB_ID": "7", "NETRUNNER_SHARD_COUNT": ""]) == nil, "empty is unset")
        // A dense array: the task's place in it, of its count.
        #expect(try shard(task(2, min: 0, max: 3)) == BulkShard(index: 2, count: 4))
        #expect(try shard(task(1, min: 1, max: 8)) == BulkShard(index: 0, count: 8))
        #expect(try shard(task(7, min: 1, max: 7, step: 3)) == BulkShard(index: 2, count: 3))
        var noStep = task(3, min: 0, max: 3)
        noStep["SLURM_ARRAY_TASK_STEP"] = nil
        #expect(try shard(noStep) == BulkShard(index: 3, count: 4))
        // Precedence: --shard, then a Kubernetes pod's, then the Slurm task's.
        let kubernetes = task(2, min: 0, max: 3).merging(["JOB_COMPLETION_INDEX": "1", "JOB_COMPLETION_COUNT": "3"]) {
            $1
        }
        #expect(try shard(kubernetes) == BulkShard(index: 1, count: 3))
        #expect(try shard(kubernetes, option: "0/2") == BulkShard(index: 0, count: 2))
        #expect(try shard(task(2, min: 0, max: 3), option: "5/6") == BulkShard(index: 5, count: 6))

        // The shipped scripts export NETRUNNER_SHARD_COUNT: the task ID is the shard, whatever the
        // array. The original array, `scontrol requeue 41_2` (the same task again) and
        // `sbatch --array=2` (a new one-task array) all run shard 2 of 4.
        let explicit = ["NETRUNNER_SHARD_COUNT": "4"]
        for environment in [task(2, min: 0, max: 3), task(2, min: 2, max: 2), task(2, min: 2, max: 5, count: 2)] {
            #expect(try shard(environment.merging(explicit) { $1 }) == BulkShard(index: 2, count: 4), "\(environment)")
        }
        // Without it, those reruns would run the wrong shard: refused, saying why and what to do.
        let rerun = refusal(task(3, min: 3, max: 3))
        #expect(rerun.contains("the only task of its array") && rerun.contains("sbatch --array=3"), "\(rerun)")
        #expect(refusal(task(0, min: 0, max: 0)).contains("the only task of its array"))
        let gaps = refusal(task(5, min: 2, max: 5, count: 2))  // sbatch --array=2,5
        #expect(gaps.contains("an array with gaps (--array=2-5 with 2 tasks)"), "\(gaps)")
        #expect(refusal(task(4, min: 1, max: 7, step: 2)).contains("with gaps"), "task 4 is not a step of 1-7:2")
        #expect(refusal(task(9, min: 0, max: 3)).contains("with gaps"), "outside its own array")
        #expect(refusal(task(5, min: 0, max: 5, step: 2, count: 3)).contains("with gaps"), "5 is no step of 0-5:2")
        let message = "\(EvaluationError.badShardEnvironment(rerun))"
        #expect(message.contains("with NETRUNNER_SHARD_COUNT=N exported") && message.contains("scontrol requeue"))

        // An explicit count: the task ID must be an index; without a task it names no shard.
        #expect(
            refusal(task(4, min: 0, max: 4).merging(explicit) { $1 }).contains(
                "is not a shard of NETRUNNER_SHARD_COUNT=4"))
        #expect(try shard(explicit) == nil, "outside an array task (a merge job): the whole run")
        #expect(try shard(explicit, option: "1/2") == BulkShard(index: 1, count: 2), "--shard still decides")
        #expect(refusal(["SLURM_ARRAY_TASK_ID": "1"]).contains("without SLURM_ARRAY_TASK_COUNT"))
    }

    @Test("Slurm numbers are checked: huge, negative, malformed values are refused by name, never trap")
    func slurmNumbersChecked() {
        let huge = "99999999999999999999999"
        let cases: [([String: String], String)] = [
            (
                ["SLURM_ARRAY_TASK_ID": huge, "NETRUNNER_SHARD_COUNT": "4"],
                "SLURM_ARRAY_TASK_ID must be a whole number from 0 to 4000000"
            ),
            (["SLURM_ARRAY_TASK_ID": "-1", "NETRUNNER_SHARD_COUNT": "4"], "SLURM_ARRAY_TASK_ID must be"),
            (
                ["SLURM_ARRAY_TASK_ID": "1", "NETRUNNER_SHARD_COUNT": "0"],
                "NETRUNNER_SHARD_COUNT must be a whole number from 1 to 1000000"
            ),
            (["SLURM_ARRAY_TASK_ID": "1", "NETRUNNER_SHARD_COUNT": huge], "NETRUNNER_SHARD_COUNT must be"),
            (["SLURM_ARRAY_TASK_ID": "1", "NETRUNNER_SHARD_COUNT": " 4"], "NETRUNNER_SHARD_COUNT must be"),
            (
                task(1, min: 0, max: 3).merging(["SLURM_ARRAY_TASK_COUNT": "9223372036854775807"]) { $1 },
                "SLURM_ARRAY_TASK_COUNT must be"
            ),
            (
                task(1, min: 0, max: 3).merging(["SLURM_ARRAY_TASK_MAX": "4000001"]) { $1 },
                "SLURM_ARRAY_TASK_MAX must be a whole number from 0 to 4000000"
            ),
            (
                task(1, min: 2, max: 3).merging(["SLURM_ARRAY_TASK_MAX": "1"]) { $1 },
                "SLURM_ARRAY_TASK_MAX must be a whole number from 2 to"
            ),
            (task(1, min: 0, max: 3).merging(["SLURM_ARRAY_TASK_STEP": "0"]) { $1 }, "SLURM_ARRAY_TASK_STEP must be"),
            (task(1, min: 0, max: 3).merging(["SLURM_ARRAY_TASK_MIN": "x"]) { $1 }, "SLURM_ARRAY_TASK_MIN must be"),
        ]
        for (environment, expected) in cases {
            #expect(refusal(environment).contains(expected), "\(environment): \(refusal(environment))")
        }
        // The largest array Slurm allows, at both ends.
        #expect(
            (try? shard(task(4_000_000, min: 3_000_001, max: 4_000_000)))
                == (try? BulkShard(index: 999_999, count: 1_000_000)))
    }
}
