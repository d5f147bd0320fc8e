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

        @Option(
            name: .customLong("min-pose-score"), parsing: .unconditional,
            help:
                "Answer no pose when its score (the mean of its keypoints' scores) is under this, 0 to 1, as MediaPipe's pose landmarker answers none under its min_pose_detection_confidence (default: 0, always the 17 keypoints, as Python)."
        )
        var minPoseScore: Double?

        func validate() throws {
            if let minPoseScore, !(0...1).contains(minPoseScore) {
                throw ValidationError("--min-pose-score \(minPoseScore) is not between 0 and 1.")
            }
        }

        func run() async throws {
            var options = PoseEstimator.Options()
            options.minPoseScore = Float(minPoseScore ?? 0)
            try await task.run(PoseEstimator.self, options: options)
        }
    }
}
