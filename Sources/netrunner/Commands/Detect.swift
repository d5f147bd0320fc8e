import ArgumentParser
import FoundationEssentials
import NetRunner
import NetRunnerImage
import TensorFlowLite

extension NetRunnerCommand {
    /// `netrunner detect IMAGE...`: boxes, labels and scores of the objects in each image.
    struct Detect: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the objects found in each image: boxes (in image pixels), labels and scores.",
            discussion: """
                Without --model, the embedded BlazeFace short-range face detector is used. Models with the \
                TFLite_Detection_PostProcess outputs (boxes, classes, scores, count; resolved by name and shape) \
                and MediaPipe-style raw anchor models are supported. --annotate writes each image with its boxes \
                drawn (PNG or JPEG, by the output's extension; with several images, OUT is a folder).
                """)

        @OptionGroup var inputs: ImageArguments

        @Option(name: .shortAndLong, help: "A .tflite detection model (default: the embedded face detector).")
        var model: String?

        @Option(name: .shortAndLong, help: "The model's labels file, one label per line.")
        var labels: String?

        @Option(help: "Leave out detections scoring below this.")
        var threshold: Float = 0.5

        @Option(name: .customLong("max-results"), help: "The most detections to report per image.")
        var maxResults: Int?

        @Option(
            name: .customLong("label-offset"),
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

        @OptionGroup var runtime: RuntimeOptions

        @Flag(help: "Print one JSON object per image (JSON Lines).")
        var json = false

        func validate() throws {
            guard !inputs.images.isEmpty else { throw ValidationError("Name at least one image file or folder.") }
            guard threshold.isFinite else { throw ValidationError("--threshold must be a number.") }
            if let maxResults, maxResults < 1 { throw ValidationError("--max-results must be 1 or more.") }
        }

        func run() throws {
            var options = ObjectDetector.Options()
            options.scoreThreshold = threshold
            options.maxResults = maxResults
            options.labelOffset = labelOffset
            options.threadCount = runtime.threads
            switch crop {
            case .letterbox: options.cropping = .letterbox
            case .stretch: options.cropping = .stretch
            case .center: options.cropping = .centerSquare
            case nil: options.cropping = nil
            }
            let detector: ObjectDetector
            let modelName: String
            if let model {
                detector = try ObjectDetector(modelPath: model, labelsPath: labels, options: options)
                modelName = model
            } else {
                let labelMap = try labels.map { try LabelMap(contentsOfFile: $0) } ?? LabelMap(labels: ["face"])
                // The embedded bundle's model.json gives the input normalisation.
                let description = try ModelDescription.parse(
                    EmbeddedModels.detectorDescription, source: EmbeddedModels.detectorName + "/model.json")
                detector = try ObjectDetector(
                    modelData: EmbeddedModels.detector, description: description, labels: labelMap, options: options)
                modelName = EmbeddedModels.detectorName
            }
            let files = inputs.files()
            guard !files.isEmpty else {
                throw ValidationError("No image files found in \(inputs.images.joined(separator: ", ")).")
            }
            let annotations = try annotate.map { try AnnotationTarget(path: $0, imageCount: files.count) }
            var failures = 0
            let prefetcher = ImagePrefetcher(
                paths: files, options: detector.decodingOptions, preprocessing: detector.preprocessing, lookahead: 3)
            while let item = prefetcher.next() {
                do {
                    let result = try detector.detect(try item.prepared.get(), decodeTime: item.decodeTime)
                    try DetectionOutput.print(result, file: item.path, model: modelName, json: json)
                    if let annotations {
                        try annotations.write(result, on: item.path, options: detector.options)
                    }
                } catch {
                    failures += 1
                    ClassificationOutput.printError(error, file: item.path, json: json)
                }
            }
            if failures > 0 {
                Console.diagnostic("\(failures) of \(files.count) images failed.")
                throw ExitCode.failure
            }
        }
    }
}
