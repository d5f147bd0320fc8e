import ArgumentParser
import NetRunner

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

        @OptionGroup var task: LocatingTaskOptions

        func run() async throws {
            try await task.run(PoseEstimator.self, options: PoseEstimator.Options())
        }
    }
}
