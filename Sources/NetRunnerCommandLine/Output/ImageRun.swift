import ArgumentParser
import NetRunner
import Synchronization

/// Runs one task over image files, as `classify`, `detect` and `run` (for a detector) do: the
/// model read once, every core busy (``BulkInference``), answers printed in file order,
/// failures reported per file.
enum ImageRun {
    /// Loads the model the flags name, runs the task on every image file and prints each
    /// outcome.
    ///
    /// - Parameters:
    ///   - task: The task type (``ImageClassifier``, ``ObjectDetector``).
    ///   - options: The task's own options; the base options are the model flags'
    ///     (``ModelOptions/baseOptions``), the thread count set per thread.
    ///   - model: The model flags.
    ///   - inputs: The image arguments.
    ///   - listed: The files and the count of unreadable entries, if already listed
    ///     (``ImageArguments/requiredFiles()``); else they are listed here.
    ///   - json: Whether errors are printed as JSON lines.
    ///   - saveInput: A folder to write what the model saw for each image (one thread is used).
    ///   - defaultKind: Whose embedded or installed model runs without `--model` (the task's own).
    ///   - adapt: Makes the task's model of the one loaded (`embed --penultimate` cuts a
    ///     classifier).
    ///   - print: Prints one image's answer, with the model's name.
    /// - Throws: The model's loading errors; `ExitCode.failure` when any image failed or any
    ///   entry could not be searched.
    static func run<Task: VisionTask>(
        _ task: Task.Type, options: Task.Options, model: ModelFlags<some ModelDefault>, inputs: ImageArguments,
        listed: (files: [String], unreadable: Int)? = nil, json: Bool, saveInput: String? = nil,
        defaultKind: ImageTask.Kind = Task.kind, adapt: (LoadedModel) throws -> LoadedModel = { $0 },
        print: @Sendable (_ file: String, _ model: String, _ answer: Task.Result) throws -> Void
    ) async throws {
        let given = try await model.load(defaultFor: defaultKind)
        let loaded = try adapt(given)
        if let refusal = otherTaskRefusal(loaded, task: Task.kind) { throw refusal }
        if let notice = model.assumptionNotice(for: given, task: Task.kind) { Console.diagnostic(notice) }
        var options = options
        options.baseOptions = model.baseOptions
        do {
            try run(
                task, options: options, model: loaded, inputs: inputs, listed: listed,
                threads: saveInput == nil ? model.threadCount : 1, runtimeThreads: model.runtimeThreads, json: json,
                saveInput: saveInput, print: print)
        } catch let error as NetRunnerError {
            throw otherCommandHint(error, model: loaded, task: Task.kind) ?? error
        }
    }

    /// Why a command of one task does not run a model that says it does another (its type, or
    /// outputs only that task claims: `classify --model EMBEDDER`), naming the command to use;
    /// `nil` when the model is the command's or says nothing.
    ///
    /// - Parameters:
    ///   - model: The model.
    ///   - task: The task the command runs.
    /// - Returns: The refusal, or `nil`.
    static func otherTaskRefusal(_ model: LoadedModel, task: ImageTask.Kind) -> TaskFailure? {
        guard let declared = ImageTask.declaredKind(of: model), declared != task,
            let definition = VisionTaskRegistry.definition(for: declared)
        else { return nil }
        let ours = VisionTaskRegistry.definition(for: task)?.modelNameWithArticle ?? "a model of task \(task)"
        return TaskFailure(
            message: "\(model.name) is \(definition.modelNameWithArticle), not \(ours): use "
                + "`netrunner \(definition.verb)` (or `bulk`, which picks the task itself).")
    }

    /// The error again with the command to use instead, when a model of another task was
    /// given (a classifier to `detect`, a detector to `classify`).
    ///
    /// - Parameters:
    ///   - error: The task's error.
    ///   - model: The model.
    ///   - task: The task the command runs.
    /// - Returns: The error with the hint, or `nil` when the model does the command's task.
    static func otherCommandHint(_ error: NetRunnerError, model: LoadedModel, task: ImageTask.Kind) -> TaskFailure? {
        switch error {
        case .unsupportedOutputs, .notAnImageModel: break
        default: return nil
        }
        let other = ImageTask.kind(of: model)
        guard other != task, let definition = VisionTaskRegistry.definition(for: other) else { return nil }
        let hint =
            "it looks like \(definition.modelNameWithArticle): use `netrunner \(definition.verb)` "
            + "(or `bulk`, which picks the task itself)"
        var message = error.description
        if message.hasSuffix(".") { message.removeLast() }
        return TaskFailure(message: "\(message); \(hint).")
    }

    /// Runs the task of a loaded model on every image file and prints each outcome.
    ///
    /// - Parameters:
    ///   - task: The task type.
    ///   - options: The task's options; the thread count is set per thread.
    ///   - loaded: The model.
    ///   - inputs: The image arguments.
    ///   - listed: The files and the count of unreadable entries, if already listed.
    ///   - threads: The interpreters side by side (see ``ModelOptions/threads``).
    ///   - runtimeThreads: The threads inside each interpreter, or `nil` for ``BulkInference``'s
    ///     choice (see ``ModelOptions/runtimeThreads``).
    ///   - json: Whether errors are printed as JSON lines.
    ///   - saveInput: A folder to write what the model saw for each image (one thread is used).
    ///   - print: Prints one image's answer, with the model's name.
    /// - Throws: The model's loading errors; `ExitCode.failure` when any image failed or any
    ///   entry could not be searched.
    static func run<Task: VisionTask>(
        _ task: Task.Type, options: Task.Options, model loaded: LoadedModel, inputs: ImageArguments,
        listed: (files: [String], unreadable: Int)? = nil, threads: Int, runtimeThreads: Int? = nil, json: Bool,
        saveInput: String? = nil,
        print: @Sendable (_ file: String, _ model: String, _ answer: Task.Result) throws -> Void
    ) throws {
        let (files, unreadable) = try listed ?? inputs.requiredFiles()
        let saver = try saveInput.map { try InputSaver(folder: $0, files: files) }
        let single = SingleThreadTask()
        let failures = Atomic<Int>(0)
        try BulkInference.run(
            files: files, threads: saver == nil ? threads : 1, accelerator: options.accelerator,
            batchSize: saver == nil ? NetRunnerCommand.Bulk.Images.gpuBatch : 1,
            makeTask: { threads in
                var taskOptions = options
                taskOptions.threadCount = runtimeThreads ?? threads
                let task = ImageTask(try Task(model: loaded, options: taskOptions))
                AcceleratorNotice.note(requested: options.accelerator, fallbackReason: task.acceleratorFallbackReason)
                if saver != nil { single.task = task }
                return task
            },
            deliver: { index, outcome in
                do {
                    guard let result = try outcome.get().result as? Task.Result else { return }
                    if let saver, let task = single.task { try saver.save(task, for: files[index]) }
                    try print(files[index], loaded.name, result)
                } catch {
                    failures.add(1, ordering: .relaxed)
                    AnswerOutput.printError(error, file: files[index], json: json)
                }
            })
        let failed = failures.load(ordering: .relaxed)
        if failed > 0 || unreadable > 0 {
            Console.diagnostic(
                "\(failed) of \(files.count) images failed"
                    + (unreadable > 0 ? "; \(unreadable) entries could not be searched." : "."))
            throw ExitCode.failure
        }
    }
}
