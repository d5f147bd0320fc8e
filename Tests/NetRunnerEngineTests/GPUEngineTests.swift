import Foundation
import NetRunner
import NetRunnerImage
import NetRunnerTestSupport
import TensorFlowLite
import Testing

@testable import NetRunnerEngine

/// Whether LiteRT's GPU accelerator finds a usable Vulkan device here (tried once).
private enum EngineGPU {
    static let verdict: (usable: Bool, reason: String) = {
        var options = Interpreter.Options()
        options.accelerator = .gpu
        do {
            _ = try Interpreter(modelPath: Fixtures.path(Fixtures.MobileNet.float32), options: options)
            return (true, "")
        } catch {
            return (false, "\(error)")
        }
    }()

    static var shouldRun: Bool {
        !GPUTestSwitch.isOff
            && (verdict.usable || ProcessInfo.processInfo.environment["NETRUNNER_TEST_REQUIRE_GPU"] == "1")
    }

    static var skipReason: Comment {
        if GPUTestSwitch.isOff { return GPUTestSwitch.offReason }
        return
            "no Vulkan device LiteRT's GPU accelerator can use here (\(verdict.reason)); scripts/install-gpu-packages.sh installs lavapipe"
    }
}

/// `serve --accelerator gpu`: the engine's workers run the models on the GPU, and answer as on
/// the CPU.
@Suite("The engine on the GPU", .serialized, .enabled(if: EngineGPU.shouldRun, EngineGPU.skipReason))
struct GPUEngineTests {
    /// An engine of the float MobileNet, ready. One worker: each GPU interpreter compiles its
    /// shaders, seconds of processor time on lavapipe, and one is enough to answer as the CPU.
    static func ready(_ accelerator: Accelerator, maxBatchSize: Int = 1) async throws -> InferenceEngine {
        let model = ServedModel(
            id: "float", model: try LoadedModel(.path(Fixtures.path(Fixtures.MobileNet.float32))), origin: "test")
        let engine = InferenceEngine(
            models: [model],
            configuration: .init(
                threads: 1, accelerator: accelerator, maxBatchSize: maxBatchSize, maxQueueDelay: .milliseconds(100)))
        engine.start()
        let deadline = ContinuousClock.now + .seconds(120)
        while !engine.isReady {
            guard ContinuousClock.now < deadline else { throw CancellationError() }
            try await Task.sleep(for: .milliseconds(20))
        }
        return engine
    }

    static func scores(_ answer: ImageAnswer) -> [(index: Int, score: Float)] {
        guard case .classification(let result) = answer else { return [] }
        return result.categories.map { ($0.index, $0.score) }
    }

    @Test("Images and raw tensors: the GPU engine's answers equal the CPU engine's within 0.0001")
    func answersAsCPU() async throws {
        let gpu = try await Self.ready(.gpu)
        let cpu = try await Self.ready(.cpu)
        #expect(gpu.state(of: "float") == .ready)
        #expect(gpu.details(of: "float")?.accelerator == .gpu)
        #expect(gpu.details(of: "float")?.isFullyAccelerated == true)
        #expect(cpu.details(of: "float")?.accelerator == .cpu)
        for photo in ["coffee.jpg", "eagle.jpg"] {
            let image = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("Tests/Fixtures/Photos/test/\(photo)")))
            let onGPU = Self.scores(try await gpu.answer(model: "float", image: image))
            let onCPU = Self.scores(try await cpu.answer(model: "float", image: image))
            #expect(!onGPU.isEmpty)
            #expect(onGPU.map(\.index) == onCPU.map(\.index), "\(photo)")
            for (a, b) in zip(onGPU, onCPU) { #expect(abs(a.score - b.score) <= 0.0001, "\(photo)") }
        }
        let input = try Fixtures.data("Tests/Fixtures/Reference/mobilenet_v2_1.0_224_float32__chelsea__in0.bin")
        let gpuTensors = try await gpu.run(model: "float", inputs: [input])
        let cpuTensors = try await cpu.run(model: "float", inputs: [input])
        let difference = Numerics.maxAbsoluteDifference(
            Numerics.floats(gpuTensors[0].data), Numerics.floats(cpuTensors[0].data))
        #expect(difference <= 0.0001)
        await gpu.shutdown()
        await cpu.shutdown()
    }

    @Test("Dynamic batching: concurrent requests share invokes, each answer as the CPU's; options bypass it")
    func dynamicBatching() async throws {
        let gpu = try await Self.ready(.gpu, maxBatchSize: 4)
        let cpu = try await Self.ready(.cpu)
        let names = ["coffee.jpg", "eagle.jpg", "grace_hopper.jpg", "chelsea.png"]
        let images = try names.map {
            try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("Tests/Fixtures/Photos/test/\($0)")))
        }
        let requests = (0..<12).map { images[$0 % images.count] }
        let answers = try await withThrowingTaskGroup(of: (Int, ImageAnswer).self) { group in
            for (index, image) in requests.enumerated() {
                group.addTask { (index, try await gpu.answer(model: "float", image: image)) }
            }
            var found: [Int: ImageAnswer] = [:]
            for try await (index, answer) in group { found[index] = answer }
            return found
        }
        #expect(answers.count == 12)
        for (index, image) in requests.enumerated() {
            let onCPU = Self.scores(try await cpu.answer(model: "float", image: image))
            let onGPU = Self.scores(try #require(answers[index]))
            #expect(onGPU.map(\.index) == onCPU.map(\.index), "request \(index)")
            for (a, b) in zip(onGPU, onCPU) { #expect(abs(a.score - b.score) <= 0.0001, "request \(index)") }
        }
        let counts = try #require(gpu.batchCounts(of: "float"))
        #expect(counts.images == 12)
        #expect(counts.batches < 12, "12 concurrent requests in \(counts.batches) invokes")
        // A request with its own options runs on a worker's task, not in a batch.
        var options = ImageTask.Options()
        options.maxResults = 2
        let two = Self.scores(try await gpu.answer(model: "float", image: images[0], options: options))
        #expect(two.count == 2)
        #expect(gpu.batchCounts(of: "float")?.images == 12)
        #expect(cpu.batchCounts(of: "float") == nil)
        await gpu.shutdown()
        await cpu.shutdown()
    }

    @Test("The batcher's waiting list is bounded, and closing it answers those waiting at once")
    func batcherBounds() async throws {
        let served = ServedModel(
            id: "float", model: try LoadedModel(.path(Fixtures.path(Fixtures.MobileNet.float32))), origin: "test")
        var options = ImageTask.Options()
        options.kind = served.kind
        options.threadCount = 1
        options.accelerator = .gpu
        let batcher = try DynamicBatcher(
            served: served, options: options, maxBatchSize: 4, maxQueueDelay: .milliseconds(1), maxWaiting: 4)
        let task = try ImageTask(model: served.model, options: options)
        let tensorizer = try ImageTensorizer(preprocessing: task.preprocessing)
        let decoded = try ImageDecoder.decode(
            data: try Fixtures.data("Tests/Fixtures/Photos/test/coffee.jpg"), options: task.decodingOptions)
        let transform = try tensorizer.prepare(decoded)
        let image = PreparedImage(input: tensorizer.input, transform: transform, preprocessingTime: .zero)
        // 24 images at once: 4 run in the first batch, at most 4 wait; the rest are busy at once
        // (before the fix every one waited, however many, for as long as the GPU took).
        // Closed once the first request the batcher took is answered (an answer, or the GPU's
        // error): closing at the last submission could come before any batch ran on a loaded
        // machine. The ones refused busy are answered at once and do not count.
        let results = await withTaskGroup(of: Result<ImageAnswerWithInput, EngineError>.self) { group in
            for _ in 0..<24 {
                group.addTask {
                    await withCheckedContinuation { continuation in
                        batcher.submit(.init(image: image, decodeTime: .zero, reply: Reply(continuation: continuation)))
                    }
                }
            }
            var all: [Result<ImageAnswerWithInput, EngineError>] = []
            var closed = false
            for await result in group {
                all.append(result)
                if case .failure(.busy) = result { continue }
                if !closed {
                    closed = true
                    Task { await batcher.close() }
                }
            }
            return all
        }
        let answered = results.filter { (try? $0.get()) != nil }.count
        let busy = results.filter { if case .failure(.busy) = $0 { true } else { false } }.count
        let closing = results.filter { if case .failure(.shuttingDown) = $0 { true } else { false } }.count
        let refused: Int = busy + closing
        let counts: Comment = "\(answered) answered, \(busy) busy, \(closing) shutting down"
        #expect(answered + refused == 24)
        #expect(answered >= 1 && answered <= 8, counts)
        #expect(refused >= 16, counts)
    }
}
