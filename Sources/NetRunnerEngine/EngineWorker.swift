import FoundationEssentials
import Logging
import NetRunner
import NetRunnerImage
import TensorFlowLite

/// A worker thread's own interpreters.
///
/// One task per model and answer options (a few kept), one bare interpreter per model for raw
/// tensors. Touched only by its thread.
final class Worker {
    private let engine: InferenceEngine
    private var tasks: [TaskKey: ImageTask] = [:]
    private var taskOrder: [TaskKey] = []
    private var interpreters: [String: Interpreter] = [:]
    private var describedModels: [String: Model] = [:]
    /// Per model with a dynamic batcher: the tensorizer this worker prepares its images with.
    private var tensorizers: [String: ImageTensorizer] = [:]
    /// The generation of each model this worker's interpreters and tasks were made of (see
    /// ``InferenceEngine/load(_:)``).
    private var generations: [String: Int] = [:]

    /// The tasks kept per worker, beyond which the oldest non-default one is dropped.
    private static let taskLimit = 16

    private struct TaskKey: Hashable {
        var model: String
        var options: ImageTask.Options
    }

    init(engine: InferenceEngine) {
        self.engine = engine
    }

    /// Makes every model's default task and runs it once on a grey image.
    func warmUp() {
        for served in engine.models where engine.state(of: served.id) != nil {
            if case .failed = engine.state(of: served.id) { continue }
            do {
                try warmUp(served)
            } catch {
                engine.loadFailed(served.id, error)
            }
        }
    }

    /// Drops what this worker made of another generation of a model (loaded again since, or a
    /// job queued before).
    private func dropStale(_ served: ServedModel) {
        let id = served.id
        guard generations[id, default: 0] != served.generation else { return }
        generations[id] = served.generation
        interpreters[id] = nil
        describedModels[id] = nil
        tensorizers[id] = nil
        for key in tasks.keys where key.model == id { tasks[key] = nil }
        taskOrder.removeAll { $0.model == id }
    }

    /// Makes a model's default task, records its details, and runs it once on a grey image.
    ///
    /// - Parameters:
    ///   - served: The model.
    ///   - replacesDetails: Whether to record its details even if the engine has some (a model
    ///     loaded again).
    /// - Throws: The errors of making its task and interpreter, and of running it.
    private func warmUp(_ served: ServedModel, replacesDetails: Bool = false) throws {
        dropStale(served)
        let task = try task(for: served, options: defaults(for: served))
        if replacesDetails || engine.details(of: served.id) == nil {
            let interpreter = try interpreter(for: served)
            var details = ModelDetails(
                inputs: try (0..<interpreter.inputTensorCount).map { try interpreter.input(at: $0) },
                outputs: try (0..<interpreter.outputTensorCount).map { try interpreter.output(at: $0) },
                preprocessing: task.preprocessing, labels: task.labels)
            details.accelerator = interpreter.accelerator
            details.isFullyAccelerated = interpreter.isFullyAccelerated
            details.decodingOptions = task.decodingOptions
            if let reason = interpreter.acceleratorFallbackReason {
                engine.logger.notice("model \(served.id) runs on the CPU (--accelerator auto): \(reason)")
            }
            engine.record(details, for: served.id, replacing: replacesDetails)
        }
        let size = task.preprocessing.size
        let grey = try PixelBuffer(
            width: size.width, height: size.height, format: .rgb24,
            bytes: [UInt8](repeating: 128, count: size.width * size.height * 3))
        _ = try task.run(.pixels(grey))
        // The model's dynamic batcher (GPU classifiers), made by the first worker here, so the
        // engine is ready only once it is.
        _ = engine.batcher(for: served, options: defaults(for: served))
    }

    /// Runs a job with the engine's ``InferenceEngine/Configuration/decoding`` and
    /// ``InferenceEngine/Configuration/modelGate`` bound, so that every photo it decodes
    /// (uploads, renderings, batches) goes where the server said, and every interpreter it makes
    /// passes the server's gate.
    func run(_ job: Job) {
        ModelGate.$policy.withValue(engine.gatePolicy) {
            ImageDecoder.$environment.withValue(engine.configuration.decoding) { perform(job) }
        }
    }

    private func perform(_ job: Job) {
        switch job {
        case .image(let served, _, _, _, _), .tensors(let served, _, _), .signature(let served, _),
            .described(let served, _, _, _), .warmUp(let served, _):
            dropStale(served)
        case .render: break
        }
        switch job {
        case .image(let served, let image, let options, let includeInput, let reply):
            reply.started()
            // Encoded uploads only: they are what the batcher's decoding takes.
            if !includeInput, case .data(let data) = image, let batcher = batcher(for: served, options: options) {
                prepareForBatch(served, image: data, batcher: batcher, reply: reply)
                return
            }
            reply.send(
                Result { () throws(EngineError) -> ImageAnswerWithInput in
                    let task = try engineError { try self.task(for: served, options: options) }
                    let answer: ImageAnswer
                    do {
                        answer = try task.run(image)
                    } catch let error as ImageError {
                        throw .badInput("\(error)")
                    } catch {
                        throw .failed("\(error)")
                    }
                    reply.record { statistics in
                        statistics.executionCount += 1
                        statistics.computeInput.add(
                            ModelStatistics.milliseconds(
                                answer.result.decodingMilliseconds + answer.result.preprocessingMilliseconds))
                        statistics.computeInfer.add(ModelStatistics.milliseconds(answer.result.inferenceMilliseconds))
                        statistics.computeOutput.add(
                            ModelStatistics.milliseconds(answer.result.postprocessingMilliseconds))
                    }
                    guard includeInput else { return ImageAnswerWithInput(answer: answer) }
                    let png = try engineError { try task.inputImage().pngData() }
                    return ImageAnswerWithInput(answer: answer, input: png)
                })
        case .tensors(let served, let inputs, let reply):
            reply.started()
            reply.send(
                Result { () throws(EngineError) -> [Tensor] in try self.runTensors(served, inputs, reply: reply) })
        case .described(let served, let image, let decoded, let reply):
            reply.started()
            let start = ContinuousClock.now
            let result = Result { () throws(EngineError) -> [String: Model.Output] in
                try engineError {
                    let model: Model
                    if let existing = self.describedModels[served.id] {
                        model = existing
                    } else {
                        model = try Model(model: served.model)
                        self.describedModels[served.id] = model
                    }
                    let pixels = try decoded?.pixels ?? ImageDecoder.decode(data: image).pixels
                    return try model.run(image: pixels)
                }
            }
            // Decoding, preprocessing and running are one call here: all counted as the run.
            reply.record { statistics in
                statistics.executionCount += 1
                statistics.computeInfer.add(ContinuousClock.now - start)
            }
            reply.send(result)
        case .render(let image, let decoded, let longestSide, let source, let reply):
            reply.started()
            let maximumPixelCount = engine.configuration.maximumPixelCount
            reply.send(
                Result { () throws(EngineError) -> RenderedImage in
                    do {
                        if let decoded { return try RenderedImage.make(decoded, longestSide: longestSide) }
                        return try RenderedImage.make(
                            image, longestSide: longestSide, maximumPixelCount: maximumPixelCount, source: source)
                    } catch {
                        throw .badInput("\(error)")
                    }
                })
        case .warmUp(let served, let reply):
            reply.send(
                Result { () throws(EngineError) -> Void in
                    try engineError { try self.warmUp(served, replacesDetails: true) }
                })
        case .signature(let served, let reply):
            reply.send(
                Result { () throws(EngineError) -> (inputs: [Tensor], outputs: [Tensor]) in
                    let interpreter = try self.interpreter(for: served)
                    return try engineError {
                        (
                            try (0..<interpreter.inputTensorCount).map { try interpreter.input(at: $0) },
                            try (0..<interpreter.outputTensorCount).map { try interpreter.output(at: $0) }
                        )
                    }
                })
        }
    }

    /// The model's batcher, when this request can go to it: batching on, the model a classifier on
    /// the GPU, the request setting no answer options.
    private func batcher(for served: ServedModel, options: ImageTask.Options) -> DynamicBatcher? {
        let defaults = defaults(for: served)
        guard normalized(options, for: served) == defaults else { return nil }
        return engine.batcher(for: served, options: defaults)
    }

    /// Decodes and prepares an image on this worker, then hands it to the batcher, which
    /// replies.
    private func prepareForBatch(
        _ served: ServedModel, image: Data, batcher: DynamicBatcher, reply: Reply<ImageAnswerWithInput>
    ) {
        do {
            let task = try task(for: served, options: defaults(for: served))
            let tensorizer: ImageTensorizer
            if let existing = tensorizers[served.id] {
                tensorizer = existing
            } else {
                tensorizer = try ImageTensorizer(preprocessing: task.preprocessing)
                tensorizers[served.id] = tensorizer
            }
            let clock = ContinuousClock()
            let start = clock.now
            let decoded: DecodedImage
            do {
                decoded = try ImageDecoder.decode(data: image, options: task.decodingOptions)
            } catch {
                reply.send(.failure(.badInput("\(error)")))
                return
            }
            let decodedAt = clock.now
            let transform = try tensorizer.prepare(decoded)
            let preparedAt = clock.now
            reply.record { $0.computeInput.add(preparedAt - start) }
            let prepared = PreparedImage(
                input: tensorizer.input, transform: transform, preprocessingTime: clock.now - decodedAt)
            batcher.submit(.init(image: prepared, decodeTime: decodedAt - start, reply: reply))
        } catch let error as ImageError {
            reply.send(.failure(.badInput("\(error)")))
        } catch {
            reply.send(.failure(.failed("\(error)")))
        }
    }

    /// Runs the interpreter on raw tensors, recording the time to copy them in, invoke and read
    /// the outputs.
    private func runTensors(_ served: ServedModel, _ inputs: [Data], reply: Reply<[Tensor]>) throws(EngineError)
        -> [Tensor]
    {
        let interpreter = try interpreter(for: served)
        guard inputs.count == interpreter.inputTensorCount else {
            throw .badInput(
                "model \"\(served.id)\" has \(interpreter.inputTensorCount) input(s); the request gave \(inputs.count)")
        }
        let clock = ContinuousClock()
        let start = clock.now
        return try engineError {
            for (index, data) in inputs.enumerated() {
                let input = try interpreter.input(at: index)
                guard data.count == input.data.count else {
                    throw EngineError.badInput(
                        "input \"\(input.name)\" of model \"\(served.id)\" is \(input.dataType) \(input.shape) "
                            + "(\(input.data.count) bytes); the request gave \(data.count) bytes")
                }
                try interpreter.copy(data, toInputAt: index)
            }
            let copied = clock.now
            try interpreter.invoke()
            let invoked = clock.now
            let outputs = try (0..<interpreter.outputTensorCount).map { try interpreter.output(at: $0) }
            let read = clock.now
            reply.record { statistics in
                statistics.executionCount += 1
                statistics.computeInput.add(copied - start)
                statistics.computeInfer.add(invoked - copied)
                statistics.computeOutput.add(read - invoked)
            }
            return outputs
        }
    }

    private func interpreter(for served: ServedModel) throws(EngineError) -> Interpreter {
        if let existing = interpreters[served.id] { return existing }
        var options = Interpreter.Options()
        options.accelerator = engine.configuration.accelerator
        let made = try engineError { try served.model.makeInterpreter(options: options) }
        interpreters[served.id] = made
        return made
    }

    /// The options a task for `served` is made with: the request's answer options, with the
    /// engine's kind and base options (one thread, exact decoding, the engine's accelerator).
    private func normalized(_ options: ImageTask.Options, for served: ServedModel) -> ImageTask.Options {
        var options = options
        options.kind = served.kind
        options.baseOptions = BaseOptions()
        options.accelerator = engine.configuration.accelerator
        return options
    }

    private func task(for served: ServedModel, options: ImageTask.Options) throws -> ImageTask {
        let options = normalized(options, for: served)
        let key = TaskKey(model: served.id, options: options)
        if let existing = tasks[key] { return existing }
        if tasks.count >= Self.taskLimit,
            let oldest = taskOrder.firstIndex(where: { $0.options != defaults(for: served) })
        {
            tasks[taskOrder.remove(at: oldest)] = nil
        }
        let made = try ImageTask(model: served.model, options: options)
        tasks[key] = made
        taskOrder.append(key)
        return made
    }

    /// The options of a request that sets none.
    func defaults(for served: ServedModel) -> ImageTask.Options {
        normalized(ImageTask.Options(), for: served)
    }
}

/// Runs `body`, turning any error into ``EngineError`` (bad input for the caller's mistakes,
/// failed for the runtime's).
private func engineError<Value>(_ body: () throws -> Value) throws(EngineError) -> Value {
    do {
        return try body()
    } catch let error as EngineError {
        throw error
    } catch let error as ImageError {
        throw .badInput("\(error)")
    } catch let error as NetRunnerError {
        throw .badInput("\(error)")
    } catch {
        throw .failed("\(error)")
    }
}
