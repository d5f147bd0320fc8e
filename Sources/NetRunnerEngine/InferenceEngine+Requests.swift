package import FoundationEssentials
package import NetRunner
import NetRunnerImage
package import TensorFlowLite

/// The requests the engine answers: each model's task on an image, its outputs by name, raw
/// tensors, its signature, and renderings, each queued for a worker.
extension InferenceEngine {
    /// Runs a model's task on an encoded image (a format of ``ImageDecoder/decodedFormats``).
    ///
    /// - Parameters:
    ///   - id: The model's id.
    ///   - image: The encoded image.
    ///   - options: The answer options (max results, thresholds, allow and deny lists); the
    ///     kind and threads are the engine's.
    /// - Returns: The answer, boxes in the image's pixels.
    /// - Throws: ``EngineError``.
    package func answer(model id: String, image: Data, options: ImageTask.Options = ImageTask.Options())
        async throws(EngineError) -> ImageAnswer
    {
        try await answerShowingInput(model: id, image: image, options: options, includeInput: false).answer
    }

    /// Runs a model's task on an encoded image for background work (an album run): waits while
    /// the queue is full instead of failing with ``EngineError/busy(queued:)``.
    ///
    /// - Parameters:
    ///   - id: The model's id.
    ///   - image: The encoded image.
    ///   - options: The answer options.
    /// - Returns: The answer, boxes in the image's pixels.
    /// - Throws: ``EngineError`` but `busy`.
    package func answerWhenRoom(model id: String, image: Data, options: ImageTask.Options = ImageTask.Options())
        async throws(EngineError) -> ImageAnswer
    {
        while true {
            await queue.waitForRoom()
            // A closed queue has room for nothing: without this the loop spun at full speed on
            // shutdown (an album run's images kept a server from stopping, two cores busy).
            if queue.isClosed { throw .shuttingDown }
            do {
                return try await answer(model: id, image: image, options: options)
            } catch .busy {
                continue  // another job took the room first
            }
        }
    }

    /// Runs a model's task on an encoded image and, if asked, returns what the model saw: its
    /// input tensor as a PNG (Net Runner's preview).
    ///
    /// - Parameters:
    ///   - id: The model's id.
    ///   - image: The encoded image.
    ///   - options: The answer options.
    ///   - includeInput: Whether to return the input as a PNG.
    /// - Returns: The answer and the PNG.
    /// - Throws: ``EngineError``.
    package func answerShowingInput(
        model id: String, image: Data, options: ImageTask.Options = ImageTask.Options(), includeInput: Bool
    ) async throws(EngineError) -> (answer: ImageAnswer, input: Data?) {
        try await answerShowingInput(model(id), image: image, options: options, includeInput: includeInput)
    }

    /// Runs the task of a model the caller has looked up (``model(_:)``: a route that checked
    /// its task first) on an encoded image, as ``answerShowingInput(model:image:options:includeInput:)``
    /// does, without looking it up again.
    ///
    /// - Parameters:
    ///   - served: The model, as ``model(_:)`` gave it.
    ///   - image: The encoded image.
    ///   - options: The answer options.
    ///   - includeInput: Whether to return the input as a PNG.
    /// - Returns: The answer and the PNG.
    /// - Throws: ``EngineError``: the model unavailable (failed, loading, unloaded), busy...
    package func answerShowingInput(
        _ served: ServedModel, image: Data, options: ImageTask.Options = ImageTask.Options(), includeInput: Bool
    ) async throws(EngineError) -> (answer: ImageAnswer, input: Data?) {
        let id = served.id
        try checkAvailable(served)
        let input = try await decodedAhead(.data(image), for: id)
        let found: ImageAnswerWithInput = try await submit(counting: id) { reply in
            .image(model: served, image: input, options: options, includeInput: includeInput, reply: reply)
        }
        return (found.answer, found.input)
    }

    /// Runs a model's task on an image in any form: a video frame's pixels, say (the server's
    /// `--stream` readers), on the engine's workers like any request.
    ///
    /// - Parameters:
    ///   - id: The model's id.
    ///   - input: The image.
    ///   - options: The answer options.
    /// - Returns: The answer, in the image's coordinates.
    /// - Throws: ``EngineError``; ``EngineError/busy(queued:)`` when the queue is full.
    package func answer(model id: String, input: ImageInput, options: ImageTask.Options = ImageTask.Options())
        async throws(EngineError) -> ImageAnswer
    {
        let served = try available(id)
        let found: ImageAnswerWithInput = try await submit(counting: id) { reply in
            .image(model: served, image: input, options: options, includeInput: false, reply: reply)
        }
        return found.answer
    }

    /// Runs a described model TensorIO's way on an encoded image (`/v1/models/{id}/run`): the
    /// description's preprocessing, every output by its layer name.
    ///
    /// - Parameters:
    ///   - id: The model's id.
    ///   - image: The encoded image.
    /// - Returns: The outputs by name.
    /// - Throws: ``EngineError``.
    package func outputs(model id: String, image: Data) async throws(EngineError) -> [String: Model.Output] {
        let served = try available(id)
        let decoded = try await decodedAhead(image, options: DecodingOptions(), source: "image data")
        return try await submit(counting: id) { reply in
            .described(model: served, image: image, decoded: decoded, reply: reply)
        }
    }

    /// Renders an encoded photo as a JPEG a browser draws (``RenderedImage``), on a worker like
    /// any request: decoded as uploads are (the largest photo ``Configuration/maximumPixelCount``,
    /// the decoder processes and the pixel budget the process has), in the bounded queue
    /// (``EngineError/busy(queued:)`` when it is full), counted in no model's statistics.
    ///
    /// - Parameters:
    ///   - image: The encoded photo.
    ///   - longestSide: The JPEG's longest side at most, in pixels.
    ///   - source: The name errors give the photo.
    /// - Returns: The rendering.
    /// - Throws: ``EngineError``: ``EngineError/badInput(_:)`` for a photo that cannot be decoded.
    package func render(image: Data, longestSide: Int, source: String) async throws(EngineError) -> RenderedImage {
        let options = RenderedImage.decodingOptions(
            longestSide: longestSide, maximumPixelCount: configuration.maximumPixelCount)
        let decoded = try await decodedAhead(image, options: options, source: source)
        return try await submit { reply in
            .render(image: image, decoded: decoded, longestSide: longestSide, source: source, reply: reply)
        }
    }

    /// Runs a model on raw input tensors (KServe v2 / Triton clients send preprocessed tensors).
    ///
    /// - Parameters:
    ///   - id: The model's id.
    ///   - inputs: Each input tensor's bytes, in the interpreter's input order.
    /// - Returns: The output tensors, in the interpreter's order.
    /// - Throws: ``EngineError``.
    package func run(model id: String, inputs: [Data]) async throws(EngineError) -> [Tensor] {
        let served = try available(id)
        return try await submit(counting: id) { reply in .tensors(model: served, inputs: inputs, reply: reply) }
    }

    /// The model's input and output tensors (names, types, shapes), as the interpreter has them.
    ///
    /// - Parameter id: The model's id.
    /// - Returns: The inputs and outputs.
    /// - Throws: ``EngineError``.
    package func signature(of id: String) async throws(EngineError) -> (inputs: [Tensor], outputs: [Tensor]) {
        let served = try available(id)
        return try await submit { reply in .signature(model: served, reply: reply) }
    }

    // MARK: Internals

    private func available(_ id: String) throws(EngineError) -> ServedModel {
        let served = try model(id)
        try checkAvailable(served)
        return served
    }

    /// Throws unless the model is ready to answer: failed, loading and unloaded ones are not.
    private func checkAvailable(_ served: ServedModel) throws(EngineError) {
        let id = served.id
        switch state(of: id) {
        // Any client may ask: the reason without this machine's paths (the log has them).
        case .failed(let reason):
            throw .modelUnavailable(id: id, reason: served.failureReason(reason, showsPath: false))
        case .loading: throw .modelUnavailable(id: id, reason: "it is still loading; retry in a moment.")
        case .unloaded: throw .modelUnloaded(id: id)
        default: return
        }
    }

    /// Queues a job and waits for its answer; `counting` names the model whose statistics
    /// count it (a request), `nil` for none.
    private func submit<Value: Sendable>(
        counting id: String? = nil, _ makeJob: (Reply<Value>) -> Job
    ) async throws(EngineError) -> Value {
        let outcome: Result<Value, EngineError> = await withCheckedContinuation { continuation in
            var reply = Reply<Value>(continuation: continuation)
            if let id { reply.statistics = (statisticsStore, id) }
            if !queue.push(makeJob(reply)) {
                continuation.resume(returning: .failure(.busy(queued: queue.depth)))
            }
        }
        return try outcome.get()
    }
}
