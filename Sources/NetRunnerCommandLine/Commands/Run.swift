import ArgumentParser
import FoundationEssentials
import NetRunner
import NetRunnerImage

extension NetRunnerCommand {
    /// `netrunner run BUNDLE IMAGE...`: any described model, no code, as Net Runner runs it.
    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run a model described by a TensorIO / Net Runner bundle on images, with no code.",
            discussion: """
                The bundle's model.json says how to prepare the image and read the outputs; the output is \
                formatted by the model's type (image.classification.*: the top 5 labels above 0.1, by their \
                display names as classify prints them; a detector: its boxes). --task runs the model as that \
                task (classify, detect, pose, segment, embed), printed as its command prints answers. The model is the first argument, \
                or --model, as in classify (then every argument is an image).
                """)

        @Argument(
            help:
                "A .tiobundle or .tfbundle folder, a zip of one, or a .tflite with a model.json beside it (unless --model names it)."
        )
        var bundle: String?

        @Option(
            name: .shortAndLong,
            help:
                "The model, as the first argument names it: a bundle folder, a zipped bundle, a .tflite with a model.json beside it, or hub:NAME[@VERSION|@ALIAS]."
        )
        var model: String?

        @OptionGroup var inputs: ImageArguments

        @OptionGroup var taskChoice: TaskOption

        @OptionGroup var runtime: RuntimeOptions
        @OptionGroup var hardware: AcceleratorOptions

        @Option(
            name: [.customLong("max-results"), .customLong("top"), .customShort("k")], parsing: .unconditional,
            help: "The most labels per output, or boxes for a detector (default: 5 labels, every box).")
        var maxResults: Int?

        @Option(
            name: [.customLong("score-threshold"), .customLong("threshold")], parsing: .unconditional,
            help:
                "Leave out answers scoring below this, 0 to 1 (default: 0.1, Net Runner's display; 0.5 for a detector)."
        )
        var scoreThreshold: Float?

        @Flag(help: "Print one JSON object per image with every output.")
        var json = false

        func validate() throws {
            guard model != nil || bundle != nil else {
                throw ValidationError("Name the model: netrunner run BUNDLE IMAGE... (or --model BUNDLE IMAGE...).")
            }
            guard !images.images.isEmpty else { throw ValidationError("Name at least one image file or folder.") }
            if let maxResults { try OptionLimits.check(maxResults, "--max-results", in: 1...10_000) }
            if let scoreThreshold { try OptionLimits.check(Double(scoreThreshold), "--score-threshold", in: 0...1) }
        }

        /// The model: `--model`, else the first argument.
        var modelText: String { model ?? bundle ?? "" }

        /// The images: every argument after the model (with `--model`, the first too).
        var images: ImageArguments {
            var images = inputs
            if model != nil, let bundle { images.images.insert(bundle, at: 0) }
            return images
        }

        /// The task a model runs as instead of printing its outputs: its description's type
        /// names one that `run` runs as its task (a detector; see
        /// ``VisionTaskDefinition/runsAsDescribedModel``), or, for a model without a type (a
        /// bare `.tflite`), a task claims its outputs (MoveNet's keypoints, DeepLab's class map:
        /// ``VisionTaskDefinition/claims(outputs:)``).
        static func task(of model: LoadedModel) -> (any VisionTaskDefinition)? {
            guard let type = model.description?.model.type else {
                guard let outputs = model.outputShapes else { return nil }
                return VisionTaskRegistry.definitions.first { $0.claims(outputs: outputs) }
            }
            guard let definition = VisionTaskRegistry.definition(modelType: type), !definition.runsAsDescribedModel
            else { return nil }
            return definition
        }

        /// A JSON line of `run`: the image and every output, by the description's names.
        struct Line: Encodable {
            var image: String
            var error = false
            var outputs: [String: Model.Output]
        }

        /// Runs a model as its task, printed as `classify` and `detect` print answers.
        private func run<Definition: VisionTaskDefinition>(
            _ definition: Definition, model loaded: LoadedModel, inputs: ImageArguments
        ) throws {
            var options = ImageTask.Options()
            options.baseOptions = runtime.baseOptions(on: hardware.choice)
            options.results = ResultOptions(maxResults: maxResults, scoreThreshold: scoreThreshold)
            let json = self.json
            try ImageRun.run(
                Definition.Task.self, options: options.taskOptions(), model: loaded, inputs: inputs, threads: 1,
                json: json,
                print: { file, _, result in
                    try AnswerOutput.print(result.imageAnswer, file: file, json: json)
                })
        }

        func run() async throws {
            let loaded = try LoadedModel(.path(await HubReference.localPath(modelText)))
            let inputs = images
            // --task: that task, whatever the description's type says of how `run` prints it.
            let chosen = try taskChoice.chosenKind(for: loaded)
            if let task = chosen.flatMap(VisionTaskRegistry.definition(for:)) ?? Self.task(of: loaded) {
                // A detector's description (type image.detection…) runs as the detector: its
                // outputs are boxes, not TensorIO arrays; a bare MoveNet or DeepLab as its task,
                // with the notice of what is assumed.
                if let notice = ModelOptions.assumptionNotice(for: loaded, task: task.kind) {
                    Console.diagnostic(notice)
                }
                try run(task, model: loaded, inputs: inputs)
                return
            }
            let model = try Model(
                model: loaded, threadCount: runtime.threads, isErrorLoggingEnabled: runtime.verbose,
                accelerator: hardware.choice)
            AcceleratorNotice.note(requested: hardware.choice, fallbackReason: model.acceleratorFallbackReason)
            let (files, unreadable) = try inputs.requiredFiles()
            var failures = unreadable
            for file in files {
                do {
                    let image = try ImageDecoder.decode(contentsOf: file)
                    let outputs = try model.run(image: image.pixels)
                    if json {
                        try AnswerOutput.printLine(Line(image: file, outputs: outputs))
                    } else {
                        Console.print(file)
                        let lines = ModelOutputText.lines(
                            outputs, description: model.description, maxResults: maxResults ?? 5,
                            threshold: Double(scoreThreshold ?? 0.1))
                        for line in lines {
                            Console.print(line)
                        }
                    }
                } catch {
                    failures += 1
                    AnswerOutput.printError(error, file: file, json: json)
                }
            }
            if failures > 0 {
                Console.diagnostic(
                    "\(failures - unreadable) of \(files.count) images failed"
                        + (unreadable > 0 ? "; \(unreadable) entries could not be searched." : "."))
                throw ExitCode.failure
            }
        }
    }
}
