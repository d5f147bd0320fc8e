import ArgumentParser
import FoundationEssentials
import NetRunner
import NetRunnerImage

extension NetRunnerCommand {
    /// `netrunner classify IMAGE...`: what is in each photo, with scores.
    struct Classify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print what is in each image: the top labels and their scores.",
            discussion: """
                Without --model, the embedded ImageNet MobileNetV2 (uint8) and its 1000 labels are used. \
                Images are centre-cropped to a square and resized, as in the TensorFlow Lite iOS example. \
                Several images run on every core (--threads N: N single-threaded classifiers side by side). \
                Folders are searched recursively; a file that cannot be read is reported and the others \
                go on; the exit status is 1 if any failed.
                """)

        @OptionGroup var inputs: ImageArguments

        @OptionGroup var model: ModelOptions

        @Option(
            name: [.customLong("top"), .customShort("k")], parsing: .unconditional, help: "Labels to print per image.")
        var top = 5

        @Option(parsing: .unconditional, help: "Leave out labels scoring below this (0 to 1).")
        var threshold: Float = 0

        @Option(name: .customLong("allow"), help: "Only report this label (repeatable).")
        var allow: [String] = []

        @Option(name: .customLong("deny"), help: "Never report this label (repeatable).")
        var deny: [String] = []

        @Option(help: "How images fit the model input: center (crop the centred square) or stretch.")
        var crop: CropChoice = .center

        @Flag(help: "Print one JSON object per image (JSON Lines).")
        var json = false

        enum CropChoice: String, ExpressibleByArgument, CaseIterable {
            case center, stretch
        }

        func validate() throws {
            guard !inputs.images.isEmpty else { throw ValidationError("Name at least one image file or folder.") }
            try OptionLimits.check(top, "--top", in: 1...10_000)
            try OptionLimits.check(Double(threshold), "--threshold", in: 0...1)
            guard allow.isEmpty || deny.isEmpty else {
                throw ValidationError("--allow and --deny cannot be used together.")
            }
        }

        func run() throws {
            var options = ImageClassifier.Options()
            options.maxResults = top
            options.scoreThreshold = threshold
            options.categoryAllowlist = allow
            options.categoryDenylist = deny
            options.isErrorLoggingEnabled = model.verbose
            options.cropping = crop == .center ? .centerSquare : .stretch
            let json = self.json
            try ImageRun.run(
                ImageClassifier.self, options: options, model: model, inputs: inputs, json: json,
                print: { file, model, result in
                    try ClassificationOutput.print(result, file: file, model: model, json: json)
                })
        }
    }
}
