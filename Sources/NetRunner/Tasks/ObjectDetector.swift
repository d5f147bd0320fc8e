public import FoundationEssentials
public import NetRunnerImage
import NetRunnerSupport
import TensorFlowLite

/// Finds objects in images with a TensorFlow Lite detector: the seed's SSD example
/// (`TFLite_Detection_PostProcess` outputs) and MediaPipe-style detectors with raw anchor
/// outputs (BlazeFace), with the Task Library's and MediaPipe's options.
///
///     let detector = try ObjectDetector(modelPath: "Models/face_detection_short_range.tflite")
///     let result = try detector.detect(fileAt: "portrait.jpg")
///     for detection in result.detections { print(detection.boundingBox, detection.score) }
///
/// Boxes are in the original image's pixels, whatever cropping, letterboxing or JPEG
/// downscaling happened on the way in.
///
/// - Note: Not thread-safe (it owns an ``Interpreter``); create one per thread.
public final class ObjectDetector: VisionTask, CoreBackedVisionTask {
    /// Options of a detector; the names are the Task Library's and MediaPipe's.
    public struct Options: VisionTaskOptions {
        /// The most detections to return, best first (`nil`: all).
        public var maxResults: Int? = nil
        /// Detections scoring below this are dropped (the SSD example's `threshold`).
        public var scoreThreshold: Float = 0.5
        /// If not empty, only these labels are returned.
        public var categoryAllowlist: [String] = []
        /// These labels are never returned.
        public var categoryDenylist: [String] = []
        /// The tensor's channel order; `nil` leaves it to the model's description, else RGB.
        public var channelOrder: ImagePreprocessing.ChannelOrder? = nil
        /// How images fit the input; `nil` picks the model family's convention (stretch for
        /// SSD, as the TFLite example; letterbox for anchor models, as MediaPipe).
        public var cropping: ImagePreprocessing.Cropping? = nil
        /// How pixels are normalised; `nil` leaves it to the model's description, else float
        /// inputs get `[-1, 1]` (mean and std 127.5), the convention of the TFLite SSD example's
        /// float models and of MediaPipe.
        public var normalization: ImagePreprocessing.Normalization? = nil
        /// Added to a class index before looking up its label; `nil` adds 1 when the labels
        /// file starts with `???` or `background` (the COCO SSD labels), else 0.
        public var labelOffset: Int? = nil
        /// The overlap above which anchor detections are merged.
        public var iouThreshold: Float = 0.3
        /// How overlapping anchor detections are merged (MediaPipe merges faces by weight).
        public var suppression: NonMaxSuppression.Mode = .weighted
        /// The anchors of a raw-output model; `nil` recognises BlazeFace short-range.
        public var anchors: SSDAnchors.Options? = nil

        /// Threads, accelerator, error logging and decoding (``BaseOptions``).
        public var baseOptions = BaseOptions()

        /// Creates options with the defaults: threshold 0.5, one thread.
        public init() {}

        /// Sets the detector's answer options: every detection scoring 0.5 or more unless
        /// given.
        ///
        /// - Parameter results: Which answers to report.
        public mutating func apply(_ results: ResultOptions) {
            maxResults = results.maxResults
            scoreThreshold = results.scoreThreshold ?? 0.5
            categoryAllowlist = results.categoryAllowlist
            categoryDenylist = results.categoryDenylist
        }

        /// The cropping, normalisation and channel order asked for.
        public var preprocessingChoices: ImagePreprocessing.Choices {
            .init(cropping: cropping, normalization: normalization, channelOrder: channelOrder)
        }
    }

    /// ``ImageTask/Kind/detection``.
    public static var kind: ImageTask.Kind { .detection }

    /// The options the detector was created with.
    public let options: Options
    /// The labels of the model's classes, if known.
    public let labels: LabelMap?

    let core: VisionTaskCore
    private let outputs: DetectorOutputs
    private let anchors: [SSDAnchors.Anchor]
    private let labelOffset: Int
    private let filter: CategoryFilter

    /// Creates a detector for a loaded model.
    ///
    /// What the options leave open comes from the model's description (see ``LoadedModel``):
    /// channel order, normalisation, the output names (matched against the Task Library's
    /// `location`, `category`, `score`, `number of detections`) and the class labels (the first
    /// output that has a labels file).
    ///
    /// - Parameters:
    ///   - model: The model.
    ///   - options: The options.
    /// - Throws: ``InterpreterError`` for a bad model, ``ModelBundleError`` for a description
    ///   that does not fit it, ``NetRunnerError`` for a model that is not an image detector.
    public init(model: LoadedModel, options: Options = Options()) throws {
        if let maxResults = options.maxResults, maxResults < 1 {
            throw NetRunnerError.invalidOption(name: "maxResults", reason: "must be 1 or more, found \(maxResults)")
        }
        guard options.scoreThreshold.isFinite else {
            throw NetRunnerError.invalidOption(name: "scoreThreshold", reason: "must be a number")
        }
        let interpreter = try VisionTaskCore.interpreter(for: model, options: options)
        guard interpreter.inputTensorCount >= 1 else {
            throw NetRunnerError.notAnImageModel(model: model.name, reason: "it has no input")
        }
        let outputNames: [String?] = model.description?.outputs.map(\.name) ?? model.metadata?.outputs.map(\.name) ?? []
        let outputTensors = try (0..<interpreter.outputTensorCount).map { try interpreter.output(at: $0) }
        let outputs = try DetectorOutputs.resolve(outputTensors, metadataNames: outputNames, model: model.name)
        let input = try interpreter.input(at: 0)
        var anchors: [SSDAnchors.Anchor] = []
        if case .anchors(_, _, let anchorCount, _) = outputs {
            let anchorOptions = options.anchors ?? Self.knownAnchors(input: input, anchorCount: anchorCount)
            guard let anchorOptions else {
                throw NetRunnerError.unsupportedOutputs(
                    model: model.name,
                    reason: "it outputs \(anchorCount) raw anchor boxes and its anchor layout is unknown; "
                        + "pass Options.anchors")
            }
            anchors = SSDAnchors(options: anchorOptions).anchors
            guard anchors.count == anchorCount else {
                throw NetRunnerError.unsupportedOutputs(
                    model: model.name,
                    reason: "the anchor options give \(anchors.count) anchors; the model has \(anchorCount)")
            }
        }
        var defaults = ImagePreprocessing.Choices(cropping: .stretch, normalization: .minusOneToOne)
        if case .anchors = outputs { defaults.cropping = .letterbox }
        self.core = try VisionTaskCore(interpreter: interpreter, model: model, options: options, taskDefaults: defaults)
        let labels = try model.labels(forOutput: nil)
        self.outputs = outputs
        self.anchors = anchors
        self.labels = labels
        self.options = options
        if let offset = options.labelOffset {
            self.labelOffset = offset
        } else if let first = labels?.labels.first, LabelMap.backgroundNames.contains(first.lowercased()) {
            self.labelOffset = 1
        } else {
            self.labelOffset = 0
        }
        self.filter = try CategoryFilter(
            allowlist: options.categoryAllowlist, denylist: options.categoryDenylist, labels: labels)
    }

    /// MediaPipe's anchor layouts, recognised by input size and anchor count.
    private static func knownAnchors(input: Tensor, anchorCount: Int) -> SSDAnchors.Options? {
        let shape = input.shape.dimensions
        guard shape.count == 4 else { return nil }
        let known = SSDAnchors.Options.blazeFaceShortRange
        if shape[1] == known.inputHeight, shape[2] == known.inputWidth, anchorCount == 896 { return known }
        return nil
    }

    /// Detects objects in an image in any form (file, bytes, pixels, decoded or prepared).
    ///
    /// - Parameter image: The image.
    /// - Returns: The detections, best first, in the original image's pixels, and the time each
    ///   stage took.
    /// - Throws: ``ImageError`` for an unreadable image, ``InterpreterError`` from the runtime.
    public func run(_ image: ImageInput) throws -> DetectionResult {
        let run = try core.run(image)
        let clock = ContinuousClock()
        let start = clock.now
        var detections: [Detection]
        switch outputs {
        case .ssd(let boxes, let classes, let scores, let count):
            detections = try ssdDetections(
                boxes: boxes, classes: classes, scores: scores, count: count, transform: run.transform)
        case .anchors(let regressors, let scores, _, let coordinates):
            detections = try anchorDetections(
                regressors: regressors, scores: scores, coordinates: coordinates, transform: run.transform)
        }
        detections.sort { $0.score > $1.score }
        if let maxResults = options.maxResults { detections = Array(detections.prefix(maxResults)) }
        return DetectionResult(
            detections: detections, imageSize: run.transform.imageSize,
            timings: run.timings(postprocessing: clock.now - start))
    }

    /// Detects objects in the image file at `path` (a format of ``ImageDecoder/decodedFormats``); see ``run(_:)``.
    public func detect(fileAt path: String) throws -> DetectionResult { try run(.file(path)) }

    /// Detects objects in an encoded image held in memory; see ``run(_:)``.
    public func detect(data: Data) throws -> DetectionResult { try run(.data(data)) }

    /// Detects objects in pixels (a camera frame, for example); see ``run(_:)``.
    public func detect(_ pixels: PixelBuffer) throws -> DetectionResult { try run(.pixels(pixels)) }

    private func floats(_ index: Int) throws -> [Float] {
        try core.interpreter.output(at: index).dequantizedValues()
    }

    private func ssdDetections(
        boxes: Int, classes: Int, scores: Int, count: Int, transform: ImageTransform
    ) throws -> [Detection] {
        let boxValues = try floats(boxes)
        let classValues = try floats(classes)
        let scoreValues = try floats(scores)
        let reported = try floats(count).first ?? 0
        let n = min(
            max(0, Int(reported.isFinite ? reported : 0)), scoreValues.count, classValues.count, boxValues.count / 4)
        var detections: [Detection] = []
        for i in 0..<n where scoreValues[i] >= options.scoreThreshold {
            guard classValues[i].isFinite, classValues[i] >= 0, classValues[i] < 1e6 else { continue }
            let classIndex = Int(classValues[i])
            guard isIncluded(classIndex) else { continue }
            // [ymin, xmin, ymax, xmax], normalised to the input.
            let box = transform.box(
                minX: boxValues[4 * i + 1], minY: boxValues[4 * i], maxX: boxValues[4 * i + 3],
                maxY: boxValues[4 * i + 2])
            detections.append(Detection(boundingBox: box, categories: [category(classIndex, score: scoreValues[i])]))
        }
        return detections
    }

    private func anchorDetections(
        regressors: Int, scores: Int, coordinates: Int, transform: ImageTransform
    ) throws -> [Detection] {
        let raw = try floats(regressors)
        let logits = try floats(scores)
        let width = Float(preprocessing.size.width)
        let height = Float(preprocessing.size.height)
        let keypointCount = (coordinates - 4) / 2
        var candidates: [NonMaxSuppression.Candidate] = []
        for (index, anchor) in anchors.enumerated() {
            let score = Scores.sigmoid(min(max(logits[index], -100), 100))
            guard score >= options.scoreThreshold else { continue }
            let row = index * coordinates
            // MediaPipe's TensorsToDetections with reverse_output_order: x before y.
            let xCenter = raw[row] / width * anchor.width + anchor.xCenter
            let yCenter = raw[row + 1] / height * anchor.height + anchor.yCenter
            let boxWidth = raw[row + 2] / width * anchor.width
            let boxHeight = raw[row + 3] / height * anchor.height
            guard boxWidth >= 0, boxHeight >= 0 else { continue }
            let box = BoundingBox(
                minX: xCenter - boxWidth / 2, minY: yCenter - boxHeight / 2,
                maxX: xCenter + boxWidth / 2, maxY: yCenter + boxHeight / 2)
            let keypoints = (0..<keypointCount).map { k in
                Keypoint(
                    x: raw[row + 4 + 2 * k] / width * anchor.width + anchor.xCenter,
                    y: raw[row + 5 + 2 * k] / height * anchor.height + anchor.yCenter)
            }
            candidates.append(NonMaxSuppression.Candidate(box: box, score: score, keypoints: keypoints))
        }
        // Suppress in input coordinates (as MediaPipe does), then project to the image.
        let kept = NonMaxSuppression.apply(candidates, iouThreshold: options.iouThreshold, mode: options.suppression)
        return kept.compactMap { candidate in
            guard isIncluded(candidate.classIndex) else { return nil }
            let box = transform.box(
                minX: candidate.box.minX, minY: candidate.box.minY, maxX: candidate.box.maxX, maxY: candidate.box.maxY)
            let keypoints = candidate.keypoints.map { point in
                let mapped = transform.point(x: point.x, y: point.y)
                return Keypoint(x: mapped.x, y: mapped.y)
            }
            return Detection(
                boundingBox: box, categories: [category(candidate.classIndex, score: candidate.score)],
                keypoints: keypoints)
        }
    }

    private func category(_ classIndex: Int, score: Float) -> Category {
        let labelIndex = classIndex + labelOffset
        return Category(
            index: classIndex, score: score, label: labels?[labelIndex], displayName: labels?.displayName(labelIndex))
    }

    private func isIncluded(_ classIndex: Int) -> Bool {
        let labelIndex = classIndex + labelOffset
        return filter.includes(labelIndex)
    }
}
