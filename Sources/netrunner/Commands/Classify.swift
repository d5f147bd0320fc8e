import ArgumentParser
import FoundationEssentials
import NetRunner
import NetRunnerImage
import Synchronization
import TensorFlowLite

extension NetRunnerCommand {
    /// `netrunner classify IMAGE...`: what is in each photo, with scores.
    struct Classify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print what is in each image: the top labels and their scores.",
            discussion: """
                Without --model, the embedded ImageNet MobileNetV2 (uint8) and its 1000 labels are used. \
                Images are centre-cropped to a square and resized, as in the TensorFlow Lite iOS example. \
                With --threads N and several images, N single-threaded classifiers work side by side. \
                Folders are searched recursively; a file that cannot be read is reported and the others \
                go on; the exit status is 1 if any failed.
                """)

        @OptionGroup var inputs: ImageArguments

        @Option(
            name: .shortAndLong,
            help:
                "A .tflite image classification model or a TensorIO bundle folder (default: the embedded MobileNetV2).")
        var model: String?

        @Option(name: .shortAndLong, help: "The model's labels file, one label per line.")
        var labels: String?

        @Option(name: [.customLong("top"), .customShort("k")], help: "Labels to print per image.")
        var top = 5

        @Option(help: "Leave out labels scoring below this.")
        var threshold: Float = 0

        @Option(name: .customLong("allow"), help: "Only report this label (repeatable).")
        var allow: [String] = []

        @Option(name: .customLong("deny"), help: "Never report this label (repeatable).")
        var deny: [String] = []

        @Option(help: "How images fit the model input: center (crop the centred square) or stretch.")
        var crop: CropChoice = .center

        @OptionGroup var runtime: RuntimeOptions

        @Flag(help: "Print one JSON object per image (JSON Lines).")
        var json = false

        enum CropChoice: String, ExpressibleByArgument, CaseIterable {
            case center, stretch
        }

        func validate() throws {
            guard !inputs.images.isEmpty else { throw ValidationError("Name at least one image file or folder.") }
            guard top >= 1 else { throw ValidationError("--top must be 1 or more.") }
            guard allow.isEmpty || deny.isEmpty else {
                throw ValidationError("--allow and --deny cannot be used together.")
            }
            if model != nil && labels == nil {
                // Allowed: indices are printed instead of labels.
            }
        }

        func run() throws {
            var options = ImageClassifier.Options()
            options.maxResults = top
            options.scoreThreshold = threshold
            options.categoryAllowlist = allow
            options.categoryDenylist = deny
            options.threadCount = runtime.threads
            options.cropping = crop == .center ? .centerSquare : .stretch
            let baseOptions = options
            let model = self.model
            let labels = self.labels
            let modelName = model ?? EmbeddedModels.classifierName
            let labelMap = try labels.map { try LabelMap(contentsOfFile: $0, classCount: model == nil ? 1000 : nil) }
            let makeClassifier = { @Sendable (threads: Int) throws -> ImageClassifier in
                var workerOptions = baseOptions
                workerOptions.threadCount = threads
                // A bundle (folder, zip, or a model.json beside the .tflite); else the .tflite
                // with its own metadata, the flags and defaults.
                if let model {
                    let resolved = try ResolvedModel(path: model, labelsPath: labels)
                    switch resolved.source {
                    case .bundle(let bundle):
                        return try ImageClassifier(bundle: bundle, options: workerOptions)
                    case .file(let path):
                        let classifier = try ImageClassifier(
                            modelPath: path, labelsPath: labels, options: workerOptions)
                        if labels == nil && classifier.labels == nil && threads == baseOptions.threadCount {
                            let assumed = classifier.preprocessing
                            Console.diagnostic(
                                "note: \(model) has no metadata and no model.json beside it: assuming RGB, a centre crop, "
                                    + (assumed.normalization == nil ? "raw bytes" : "values in [0, 1]")
                                    + ", and no labels (give --labels to name the classes).")
                        }
                        return classifier
                    }
                }
                let embeddedLabels =
                    try labelMap
                    ?? LabelMap(text: EmbeddedModels.classifierLabels, source: "embedded labels", classCount: 1000)
                let description = try ModelDescription.parse(
                    EmbeddedModels.classifierDescription, source: EmbeddedModels.classifierName + "/model.json")
                return try ImageClassifier(
                    modelData: EmbeddedModels.classifier, description: description, labels: embeddedLabels,
                    options: workerOptions)
            }
            let files = inputs.files()
            guard !files.isEmpty else {
                throw ValidationError("No image files found in \(inputs.images.joined(separator: ", ")).")
            }
            let json = self.json
            let failures = Atomic<Int>(0)
            if files.count > 1 && runtime.threads > 1 {
                // Several images and several cores: one single-threaded classifier per core,
                // each decoding and classifying its own images; answers printed in order.
                try ParallelRunner.run(
                    count: files.count, workers: runtime.threads,
                    makeWorker: { try makeClassifier(1) },
                    work: { classifier, index in
                        Result { () throws(TaskFailure) in
                            do {
                                return try classifier.classify(fileAt: files[index])
                            } catch {
                                throw TaskFailure(message: "\(error)")
                            }
                        }
                    },
                    deliver: { index, result in
                        switch result {
                        case .success(let answer):
                            try? ClassificationOutput.print(answer, file: files[index], model: modelName, json: json)
                        case .failure(let failure):
                            failures.add(1, ordering: .relaxed)
                            ClassificationOutput.printError(failure, file: files[index], json: json)
                        }
                    })
            } else {
                // One image, or one core: decoding and preprocessing run on a second thread,
                // ahead of inference.
                let classifier = try makeClassifier(runtime.threads)
                let prefetcher = ImagePrefetcher(
                    paths: files, options: classifier.decodingOptions, preprocessing: classifier.preprocessing,
                    lookahead: 3)
                while let item = prefetcher.next() {
                    do {
                        let result = try classifier.classify(try item.prepared.get(), decodeTime: item.decodeTime)
                        try ClassificationOutput.print(result, file: item.path, model: modelName, json: json)
                    } catch {
                        failures.add(1, ordering: .relaxed)
                        ClassificationOutput.printError(error, file: item.path, json: json)
                    }
                }
            }
            let failed = failures.load(ordering: .relaxed)
            if failed > 0 {
                Console.diagnostic("\(failed) of \(files.count) images failed.")
                throw ExitCode.failure
            }
        }
    }
}
