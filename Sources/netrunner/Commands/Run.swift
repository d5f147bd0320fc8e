import ArgumentParser
import FoundationEssentials
import NetRunner
import NetRunnerImage

extension NetRunnerCommand {
    /// `netrunner run BUNDLE IMAGE...`: any described model, no code, as Net Runner runs it.
    struct Run: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run a model described by a TensorIO / Net Runner bundle on images, with no code.",
            discussion: """
                The bundle's model.json says how to prepare the image and read the outputs; the output is \
                formatted by the model's type (image.classification.*: the top 5 labels above 0.1).
                """)

        @Argument(help: "A .tiobundle or .tfbundle folder, a zip of one, or a .tflite with a model.json beside it.")
        var bundle: String

        @OptionGroup var inputs: ImageArguments

        @OptionGroup var runtime: RuntimeOptions

        @Flag(help: "Print one JSON object per image with every output.")
        var json = false

        func validate() throws {
            guard !inputs.images.isEmpty else { throw ValidationError("Name at least one image file or folder.") }
        }

        /// Whether a model runs as a detector: its description's type names detection.
        static func isDetector(_ model: LoadedModel) -> Bool {
            ImageTask.kind(type: model.description?.model.type) == .detection
        }

        /// A JSON line of `run`: the image and every output, by the description's names.
        struct Line: Encodable {
            var image: String
            var error = false
            var outputs: [String: Model.Output]
        }

        func run() throws {
            let loaded = try LoadedModel(.path(HubReference.localPath(bundle)))
            if Self.isDetector(loaded) {
                // A detector's description (type image.detection…) runs as the detector: its
                // outputs are boxes, not TensorIO arrays.
                var options = ObjectDetector.Options()
                options.threadCount = runtime.threads
                options.isErrorLoggingEnabled = runtime.verbose
                let json = self.json
                try ImageRun.run(
                    ObjectDetector.self, options: options, model: loaded, inputs: inputs, threads: 1, json: json,
                    print: { file, _, result in
                        try DetectionOutput.print(result, file: file, json: json)
                    })
                return
            }
            let model = try Model(model: loaded, threadCount: runtime.threads, isErrorLoggingEnabled: runtime.verbose)
            let (files, unreadable) = try inputs.requiredFiles()
            var failures = unreadable
            for file in files {
                do {
                    let image = try ImageDecoder.decode(contentsOf: file)
                    let outputs = try model.run(image: image.pixels)
                    if json {
                        try ClassificationOutput.printLine(Line(image: file, outputs: outputs))
                    } else {
                        Console.print(file)
                        for line in ModelOutputText.lines(outputs, description: model.description) {
                            Console.print(line)
                        }
                    }
                } catch {
                    failures += 1
                    ClassificationOutput.printError(error, file: file, json: json)
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
