import ArgumentParser
import FoundationEssentials
import NetRunner
import NetRunnerImage

extension NetRunnerCommand {
    /// `netrunner classify IMAGE...`: what is in each photo, with scores.
    struct Classify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print what is in each image: the top labels and their scores.",
            discussion: """
                Without --model, the embedded ImageNet MobileNetV2 (uint8) and its 1000 labels are used. \
                Images are centre-cropped to a square and resized, as in the TensorFlow Lite iOS example; the \
                input equals Python's (ai_edge_litert with Pillow's full decode and bilinear resize). \
                Several images run on every core (--threads N: N classifiers side by side, each on one thread; \
                --runtime-threads M: M threads inside each). \
                Folders are searched recursively; a file that cannot be read is reported and the others \
                go on; the exit status is 1 if any failed.
                """)

        @OptionGroup var inputs: ImageArguments

        @OptionGroup var model: ModelOptions

        @OptionGroup var results: ResultFlags

        @Option(
            help:
                "How images fit the model input: center (crop the centred square) or stretch (default: the bundle's crop, else center)."
        )
        var crop: CropChoice?

        @OptionGroup var answers: AnswerFlags

        enum CropChoice: String, ExpressibleByArgument, CaseIterable {
            case center, stretch
        }

        func validate() throws {
            guard !inputs.images.isEmpty else { throw ValidationError("Name at least one image file or folder.") }
        }

        func run() async throws {
            var options = ImageClassifier.Options()
            options.apply(results.options)
            options.cropping = crop.map { $0 == .center ? .centerSquare : .stretch }
            let (json, results) = (answers.json, self.results.options)
            try await ImageRun.run(
                ImageClassifier.self, options: options, model: model, inputs: inputs, json: json,
                saveInput: answers.saveInput,
                print: { file, _, result in
                    try AnswerOutput.print(results.shown(result.imageAnswer), file: file, json: json)
                })
        }
    }
}
