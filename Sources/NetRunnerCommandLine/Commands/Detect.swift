import ArgumentParser
import FoundationEssentials
import NetRunner
import NetRunnerImage

extension NetRunnerCommand {
    /// `netrunner detect IMAGE...`: boxes, labels and scores of the objects in each image.
    struct Detect: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the objects found in each image: boxes (in image pixels), labels and scores.",
            discussion: """
                Without --model, the embedded BlazeFace short-range face detector is used; --model takes a \
                .tflite file, a bundle folder or a zipped bundle. Several images run on every core. Models with the \
                TFLite_Detection_PostProcess outputs (boxes, classes, scores, count; resolved by name and shape) \
                and MediaPipe-style raw anchor models are supported. --annotate writes each image with its boxes \
                drawn (PNG or JPEG, by the output's extension; with several images, OUT is a folder).
                """)

        @OptionGroup var inputs: ImageArguments

        @OptionGroup var model: ModelOptions

        @OptionGroup var results: ResultFlags

        @Option(
            name: .customLong("label-offset"), parsing: .unconditional,
            help:
                "Added to class indices before the label lookup (default: 1 when the labels start with ??? or background)."
        )
        var labelOffset: Int?

        @Option(
            help:
                "How images fit the model input: letterbox, stretch or center (default: letterbox for raw anchor models, stretch for SSD models)."
        )
        var crop: CropChoice?

        enum CropChoice: String, ExpressibleByArgument, CaseIterable {
            case letterbox, stretch, center
        }

        @Option(help: "Write the images with the boxes drawn: a .png/.jpg file, or a folder for several images.")
        var annotate: String?

        @OptionGroup var answers: AnswerFlags

        func validate() throws {
            guard !inputs.images.isEmpty else { throw ValidationError("Name at least one image file or folder.") }
            if let labelOffset { try OptionLimits.check(labelOffset, "--label-offset", in: -1000...1000) }
            if let annotate { _ = try AnnotationTarget.namesFile(annotate) }
        }

        func run() async throws {
            var options = ObjectDetector.Options()
            options.apply(results.options)
            options.labelOffset = labelOffset
            switch crop {
            case .letterbox: options.cropping = .letterbox
            case .stretch: options.cropping = .stretch
            case .center: options.cropping = .centerSquare
            case nil: options.cropping = nil
            }
            let listed = try inputs.requiredFiles()
            let annotations = try annotate.map { try AnnotationTarget(path: $0, files: listed.files) }
            let json = answers.json
            try await ImageRun.run(
                ObjectDetector.self, options: options, model: model, inputs: inputs, listed: listed, json: json,
                saveInput: answers.saveInput,
                print: { file, _, result in
                    try AnswerOutput.print(.detection(result), file: file, json: json)
                    try annotations?.write(.detection(result), on: file)
                })
        }
    }
}
