import ArgumentParser
import NetRunner
import NetRunnerImage

extension NetRunnerCommand {
    /// `netrunner pose --model MODEL IMAGE...`: a person's body keypoints in each image.
    struct Pose: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a person's 17 body keypoints in each image: names, positions (image pixels), scores.",
            discussion: """
                --model is required (no pose model is built in): a single-pose model such as MoveNet \
                (output [1, 1, 17, 3]: y, x, score), as a .tflite file, a bundle folder, a zipped bundle, a catalog \
                id or hub:. The whole image is resized to the input. --annotate writes each image with the skeleton \
                drawn (PNG or JPEG, by the output's extension; with several images, OUT is a folder).
                """)

        @OptionGroup var inputs: ImageArguments

        @OptionGroup var model: ModelOptions

        @Option(help: "Write the images with the skeleton drawn: a .png/.jpg file, or a folder for several images.")
        var annotate: String?

        @Flag(help: "Print one JSON object per image (JSON Lines).")
        var json = false

        func validate() throws {
            guard !inputs.images.isEmpty else { throw ValidationError("Name at least one image file or folder.") }
            if let annotate { _ = try AnnotationTarget.namesFile(annotate) }
        }

        func run() async throws {
            let listed = try inputs.requiredFiles()
            let annotations = try annotate.map { try AnnotationTarget(path: $0, files: listed.files) }
            let json = self.json
            try await ImageRun.run(
                PoseEstimator.self, options: PoseEstimator.Options(), model: model, inputs: inputs, listed: listed,
                json: json,
                print: { file, _, result in
                    try AnswerOutput.print(result.imageAnswer, file: file, json: json)
                    try annotations?.write(result.imageAnswer, on: file)
                })
        }
    }
}
