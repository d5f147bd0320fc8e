import ArgumentParser
import NetRunner
import NetRunnerImage

extension NetRunnerCommand {
    /// `netrunner segment --model MODEL IMAGE...`: the class of every pixel of each image.
    struct Segment: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the classes found in each image and the share of its pixels each covers.",
            discussion: """
                --model is required (no segmenter is built in): a semantic segmentation model such as DeepLab \
                v3 (output [1, H, W] class indices or [1, H, W, classes] scores), as a .tflite file, a bundle \
                folder, a zipped bundle, a catalog id or hub:. The whole image is resized to the input; the mask is \
                made at the image's size. --annotate writes each image with its mask blended in (PNG or JPEG, by \
                the output's extension; with several images, OUT is a folder).
                """)

        @OptionGroup var inputs: ImageArguments

        @OptionGroup var model: ModelOptions

        @Option(help: "Write the images with the mask blended in: a .png/.jpg file, or a folder for several images.")
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
                ImageSegmenter.self, options: ImageSegmenter.Options(), model: model, inputs: inputs, listed: listed,
                json: json,
                print: { file, _, result in
                    try AnswerOutput.print(result.imageAnswer, file: file, json: json)
                    try annotations?.write(result.imageAnswer, on: file)
                })
        }
    }
}
