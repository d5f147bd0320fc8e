package import NetRunnerImage
import Synchronization

/// The vision tasks the library runs: ``ImageTask/Kind/classification``,
/// ``ImageTask/Kind/detection``, ``ImageTask/Kind/pose``, ``ImageTask/Kind/segmentation`` and
/// ``ImageTask/Kind/embedding`` from the start, and any task registered beside them.
///
/// Everything that depends on what a model does (making its task, telling the task from a
/// `model.type`, writing and reading its results line, printing, drawing) asks here, so a
/// registered task runs through ``ImageTask``, bulk inference, the results line and the
/// printers with nothing else changed.
///
///     VisionTaskRegistry.register(MeanScoreDefinition())
///     let task = try ImageTask(modelAt: "mean.tiobundle")   // model.type "image.mean_score"
public enum VisionTaskRegistry {
    private static let registered = Mutex<[any VisionTaskDefinition]>([
        ClassificationDefinition(), DetectionDefinition(), PoseDefinition(), SegmentationDefinition(),
        EmbeddingDefinition(),
    ])

    /// Registers a task, or replaces the definition registered under its kind.
    ///
    /// - Parameter definition: The task's definition.
    public static func register(_ definition: some VisionTaskDefinition) {
        registered.withLock { definitions in
            if let index = definitions.firstIndex(where: { $0.kind == definition.kind }) {
                definitions[index] = definition
            } else {
                definitions.append(definition)
            }
        }
    }

    /// Every registered task, the library's five first.
    public static var definitions: [any VisionTaskDefinition] {
        registered.withLock { $0 }
    }

    /// Every registered task's kind, in the order of ``definitions``.
    public static var kinds: [ImageTask.Kind] { definitions.map(\.kind) }

    /// The task registered under a kind.
    ///
    /// - Parameter kind: The kind.
    /// - Returns: Its definition, or `nil` if no task is registered under it.
    public static func definition(for kind: ImageTask.Kind) -> (any VisionTaskDefinition)? {
        registered.withLock { $0.first { $0.kind == kind } }
    }

    /// The task whose verb this is (`classify`).
    ///
    /// - Parameter verb: The verb of a command or route.
    /// - Returns: Its definition, or `nil`.
    public static func definition(verb: String) -> (any VisionTaskDefinition)? {
        registered.withLock { $0.first { $0.verb == verb } }
    }

    /// The task a TensorIO `model.type` names, the first registered that claims it.
    ///
    /// - Parameter modelType: The description's `model.type`.
    /// - Returns: Its definition, or `nil` when no task claims the type.
    public static func definition(modelType: String) -> (any VisionTaskDefinition)? {
        let type = modelType.lowercased()
        return registered.withLock { $0.first { $0.names(modelType: type) } }
    }

    /// The definition of the task an answer comes from.
    ///
    /// - Parameter answer: The answer.
    /// - Returns: The definition.
    /// - Throws: ``NetRunnerError/invalidOption(name:reason:)`` for an answer of a task no
    ///   longer registered.
    package static func definition(of answer: ImageAnswer) throws -> any VisionTaskDefinition {
        guard let definition = definition(for: answer.kind) else {
            throw NetRunnerError.invalidOption(name: "task", reason: "no task named \(answer.kind) is registered")
        }
        return definition
    }
}

// The entry points on any answer: each opens the definition and hands it its own result.
extension VisionTaskDefinition {
    package func result(of answer: ImageAnswer) -> Task.Result? {
        answer.result as? Task.Result
    }

    package func makeAnyTask(model: LoadedModel, options: ImageTask.Options) throws -> any VisionTask {
        try makeTask(model: model, options: options)
    }

    package func encode(answer: ImageAnswer, to encoder: any Encoder) throws {
        guard let result = result(of: answer) else { return }
        try encode(result, to: encoder)
    }

    package func decodeAnswer(from decoder: any Decoder, timings: ResultTimings) throws -> ImageAnswer {
        try decode(from: decoder, timings: timings).imageAnswer
    }

    package func csvFields(answer: ImageAnswer) -> (answer: String, score: String, results: String) {
        result(of: answer).map(csvFields) ?? ("", "", "")
    }

    package func textLines(answer: ImageAnswer, image: String) -> [String] {
        result(of: answer).map { textLines($0, image: image) } ?? []
    }

    package func summary(answer: ImageAnswer) -> String {
        result(of: answer).map(summary) ?? ""
    }

    package func shownAnswers(answer: ImageAnswer) -> [(label: String, score: Float, box: [Float]?)] {
        result(of: answer).map(shownAnswers) ?? []
    }

    package func imageSize(answer: ImageAnswer) -> PixelSize? {
        result(of: answer).flatMap(imageSize)
    }

    package func picture(answer: ImageAnswer) throws -> TaskPicture? {
        guard let result = result(of: answer) else { return nil }
        return try picture(result)
    }

    package func draw(answer: ImageAnswer, on image: PixelBuffer) throws(ImageError) -> PixelBuffer {
        guard let result = result(of: answer) else { return image }
        return try draw(result, on: image)
    }

    package func scaled(answer: ImageAnswer, from size: PixelSize, to target: PixelSize) -> ImageAnswer {
        result(of: answer).map { scaled($0, from: size, to: target).imageAnswer } ?? answer
    }
}
