import Foundation
import NetRunner
import NetRunnerImage
import NetRunnerTestSupport
import Testing

/// A task that runs a classifier and counts the batches it is asked to run: a
/// ``BatchingVisionTask`` other than the classifier.
private final class CountingBatchTask: WrappingVisionTask, BatchingVisionTask {
    static var kind: ImageTask.Kind { ImageTask.Kind("counting_batch") }

    let wrapped: ImageClassifier
    /// The size of each batch it ran.
    private(set) var batchSizes: [Int] = []

    init(model: LoadedModel, options: ImageClassifier.Options) throws {
        wrapped = try ImageClassifier(model: model, options: options)
    }

    func run(_ image: ImageInput) throws -> ClassificationResult { try wrapped.run(image) }

    func run(batch: [(image: PreparedImage, decodeTime: Duration)], capacity: Int?) throws -> [ClassificationResult] {
        batchSizes.append(batch.count)
        return try wrapped.run(batch: batch, capacity: capacity)
    }
}

/// The same task that does not batch.
private final class OneByOneTask: WrappingVisionTask {
    static var kind: ImageTask.Kind { ImageTask.Kind("one_by_one") }

    let wrapped: ImageClassifier

    init(model: LoadedModel, options: ImageClassifier.Options) throws {
        wrapped = try ImageClassifier(model: model, options: options)
    }

    func run(_ image: ImageInput) throws -> ClassificationResult { try wrapped.run(image) }
}

/// ``ImageTask/run(batch:capacity:)`` runs any ``BatchingVisionTask`` in batches, not only the
/// classifier, and any other task one image at a time.
@Suite("Batching by protocol")
struct BatchingTaskTests {
    static let names = ["chelsea.png", "coffee.jpg", "eagle.jpg", "grace_hopper.jpg"]
    static let photos = names.map { Fixtures.path("Tests/Fixtures/Photos/test/" + $0) }

    /// The Python reference's top-1 class of each photo (`ai_edge_litert`, Pillow's crop).
    static func referenceTop1(model: String) throws -> [Int] {
        let entry = try #require(try Fixtures.reference().models.first { $0.file == model })
        return try names.map { name in
            let stem = String(name.prefix { $0 != "." })
            let testCase = try #require(entry.cases.first { $0.name == stem && $0.threads == 1 })
            return Int(try #require(testCase.top5?.first)[0])
        }
    }

    static func batch(for task: ImageTask) throws -> [(image: PreparedImage, decodeTime: Duration)] {
        let prefetcher = ImagePrefetcher(
            paths: photos, options: task.decodingOptions, preprocessing: task.preprocessing)
        var batch: [(image: PreparedImage, decodeTime: Duration)] = []
        while let item = prefetcher.next() { batch.append((try item.prepared.get(), item.decodeTime)) }
        return batch
    }

    @Test("A batching task gets the whole batch and its model runs it once; another runs image by image")
    func batchingTask() throws {
        let model = try LoadedModel(.path(Fixtures.path(Fixtures.MobileNet.uint8)))
        let counting = try CountingBatchTask(model: model, options: .init())
        let task = ImageTask(counting)
        let batch = try Self.batch(for: task)
        #expect(batch.count == 4)
        let together = try task.run(batch: batch, capacity: 4)
        #expect(counting.batchSizes == [4])
        // The classifier under it ran the four in one invoke: each answer says its batch.
        #expect(together.allSatisfy { $0.batch == together.first?.batch && $0.batch?.size == 4 })
        let single = ImageTask(try OneByOneTask(model: model, options: .init()))
        let alone = try single.run(batch: batch, capacity: 4)
        #expect(alone.allSatisfy { $0.batch == nil })
        // On the CPU a batch's answers are bit for bit the images' alone.
        #expect(together.map(Self.categories) == alone.map(Self.categories))
        #expect(
            alone.compactMap { Self.categories($0).first?.index }
                == (try Self.referenceTop1(model: Fixtures.MobileNet.uint8)))
    }

    static func categories(_ answer: ImageAnswer) -> [Category] {
        guard case .classification(let result) = answer else { return [] }
        return result.categories
    }

    @Test("A definition's runsInBatches is whether its task batches")
    func runsInBatches() {
        #expect(VisionTaskRegistry.definition(for: .classification)?.runsInBatches == true)
        for kind in [ImageTask.Kind.detection, .pose, .segmentation, .embedding] {
            #expect(VisionTaskRegistry.definition(for: kind)?.runsInBatches == false, "\(kind)")
        }
    }
}
