import ArgumentParser
import NetRunner

/// What `pose` and `segment` share: the images, the model, `--annotate` and `--json`, and
/// their run (every answer printed, and drawn when asked).
struct LocatingTaskOptions: ParsableArguments {
    @OptionGroup var inputs: ImageArguments

    @OptionGroup var model: RequiredModelOptions

    @Option(
        help: ArgumentHelp(
            "Write the images with the answers drawn (the skeleton, the mask): a .png/.jpg file, or a folder for "
                + "several images."))
    var annotate: String?

    @Flag(help: "Print one JSON object per image (JSON Lines).")
    var json = false

    func validate() throws {
        guard !inputs.images.isEmpty else { throw ValidationError("Name at least one image file or folder.") }
        if let annotate { _ = try AnnotationTarget.namesFile(annotate) }
    }

    /// Runs a task on every image: each answer printed (text or JSON) and, with `--annotate`,
    /// drawn.
    ///
    /// - Parameters:
    ///   - task: The task type.
    ///   - options: Its options (the base options are the model flags').
    /// - Throws: The errors of `ImageRun.run`: loading the model, `ExitCode.failure` for a failed image.
    func run<Task: VisionTask>(_ task: Task.Type, options: Task.Options) async throws {
        let listed = try inputs.requiredFiles()
        let annotations = try annotate.map { try AnnotationTarget(path: $0, files: listed.files) }
        let json = self.json
        try await ImageRun.run(
            task, options: options, model: model, inputs: inputs, listed: listed, json: json,
            print: { file, _, result in
                try AnswerOutput.print(result.imageAnswer, file: file, json: json)
                try annotations?.write(result.imageAnswer, on: file)
            })
    }
}
