import ArgumentParser
import NetRunner

extension NetRunnerCommand {
    /// `netrunner pose --model MODEL IMAGE...`: a person's body keypoints in each image.
    struct Pose: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a person's 17 body keypoints in each image: names, positions (image pixels), scores.",
            discussion: """
                Without --model, the MoveNet installed with NetRunner (movenet-single-pose-lightning-ptq, in \
                share/netrunner/models); a build that is not installed has none built in and needs --model: \
                a single-pose model such as MoveNet \
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
