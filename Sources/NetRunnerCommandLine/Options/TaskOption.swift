import ArgumentParser
import NetRunner
import NetRunnerSupport

/// `--task`, on the commands that run whatever task a model does (`run`, `bulk`, `stream`):
/// the task to run it as, by its command's verb (`classify`, `detect`, `pose`, `segment`,
/// `embed`) or its kind (`classification` ...), instead of the task told from the model.
///
/// A model that declares a task (its `model.json` type, its metadata, or outputs only one task
/// claims) is refused for another, as the commands of one task refuse it; `--task` decides
/// for a model that says nothing (a bare `.tflite` of one output is otherwise taken for a
/// classifier: `--task embed` takes its output for an embedding).
struct TaskOption: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The task to run the model as, instead of the one told from the model (its model.json type, else its outputs); a model that declares another task is refused.",
            valueName: VisionTaskRegistry.definitions.map(\.verb).joined(separator: "|")))
    var task: String?

    func validate() throws { _ = try chosen }

    /// The task `--task` names, or `nil` without it.
    ///
    /// - Throws: `ValidationError` naming the known tasks (the closest first) for an unknown name.
    var chosen: ImageTask.Kind? {
        get throws {
            guard let task else { return nil }
            let name = task.lowercased()
            let definitions = VisionTaskRegistry.definitions
            if let found = definitions.first(where: { $0.verb == name || $0.kind.rawValue == name }) {
                return found.kind
            }
            let verbs = definitions.map(\.verb)
            let guess = closestMatch(to: name, in: verbs + definitions.map(\.kind.rawValue))
            throw ValidationError(
                "--task \(task) is not a task NetRunner knows"
                    + (guess.map { " (did you mean \($0)?)" } ?? "") + "; known: \(verbs.joined(separator: ", ")).")
        }
    }

    /// The task to run a model as: `--task`, refusing a model that declares another, else the
    /// task told from the model (``ImageTask/kind(of:)``).
    ///
    /// - Parameter model: The model.
    /// - Returns: The task.
    /// - Throws: `ValidationError` for an unknown name; ``TaskFailure`` for a model of another task.
    func kind(for model: LoadedModel) throws -> ImageTask.Kind {
        try chosenKind(for: model) ?? ImageTask.kind(of: model)
    }

    /// The task `--task` chose for a model, refusing a model that declares another; `nil`
    /// without `--task`.
    ///
    /// - Parameter model: The model.
    /// - Returns: The task, or `nil`.
    /// - Throws: `ValidationError` for an unknown name; ``TaskFailure`` for a model of another task.
    func chosenKind(for model: LoadedModel) throws -> ImageTask.Kind? {
        guard let chosen = try chosen else { return nil }
        if let declared = ImageTask.declaredKind(of: model), declared != chosen,
            let definition = VisionTaskRegistry.definition(for: declared)
        {
            let verb = VisionTaskRegistry.definition(for: chosen)?.verb ?? chosen.rawValue
            throw TaskFailure(
                message: "\(model.name) is \(definition.modelNameWithArticle), not a model to \(verb): "
                    + "give --task \(definition.verb), or leave --task out.")
        }
        return chosen
    }
}
