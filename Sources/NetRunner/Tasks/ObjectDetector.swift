public import FoundationEssentials
public import NetRunnerImage
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
public final class ObjectDetector {
    /// Options of a detector; the names are the Task Library's and MediaPipe's.
    public struct Options: Equatable, Hashable, Sendable {
        /// The most detections to return, best first (`nil`: all).
        public var maxResults: Int? = nil
        /// Detections scoring below this are dropped (the SSD example's `threshold`).
        public var scoreThreshold: Float = 0.5
        /// If not empty, only these labels are returned.
        public var categoryAllowlist: [String] = []
        /// These labels are never returned.
        public var categoryDenylist: [String] = []
        /// CPU threads for inference.
        public var threadCount: Int = 1
        /// How images fit the input; `nil` picks the model family's convention (stretch for
        /// SSD, as the TFLite example; letterbox for anchor models, as MediaPipe).
        public var cropping: ImagePreprocessing.Cropping? = nil
        /// How pixels are normalised for float inputs; `nil` uses `[-1, 1]` (mean and std
        /// 127.5), the convention of the TFLite SSD example's float models and of MediaPipe.
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
        /// The largest image, in pixels, the decoder accepts (checked before allocating).
        public var maximumPixelCount: Int = DecodingOptions.defaultMaximumPixelCount
        /// Whether JPEGs much larger than the input are scaled down while decoding.
        ///
        /// Scaling happens in the DCT domain, as Pillow's `draft` does: several times faster
        /// on large photos, and the input differs slightly from a full decode and resize.
        /// Evaluations compared with a full-decode reference turn it off.
        public var scalesWhileDecoding: Bool = true

        /// Creates options with the defaults: threshold 0.5, one thread.
        public init() {}
    }

    /// The options the detector was created with.
    public let options: Options
    /// The labels of the model's classes, if a labels file was given.
    public let labels: LabelMap?
    /// The preprocessing, derived once from the model's input.
    public let preprocessing: ImagePreprocessing

    private let interpreter: Interpreter
    private let tensorizer: ImageTensorizer
    private let outputs: DetectorOutputs
    private let anchors: [SSDAnchors.Anchor]
    private let labelOffset: Int
    private let filter: CategoryFilter

    /// Creates a detector.
    ///
    /// A model carrying TFLite metadata gives its input normalisation, its output names and its
    /// packed class labels; `options` and `labelsPath` override them.
    ///
    /// - Parameters:
    ///   - modelPath: A `.tflite` detection model.
    ///   - labelsPath: Its labels file, or `nil`.
    ///   - options: The options.
    /// - Throws: ``InterpreterError`` for a bad model, ``NetRunnerError`` for a model that is
    ///   not an image detector.
    public convenience init(modelPath: String, labelsPath: String? = nil, options: Options = Options()) throws {
        let interpreter = try Interpreter(modelPath: modelPath, options: Self.interpreterOptions(options))
        var labels = try labelsPath.map { path throws(NetRunnerError) in try LabelMap(contentsOfFile: path) }
        var options = options
        var metadataNames: [String?] = []
        // TFLite metadata, as the Task Library's detectors carry it: normalisation, output
        // names, and the class labels packed with the model.
        if let buffer = interpreter.modelMetadata() {
            let metadata = try TFLiteMetadata(buffer, source: modelPath)
            metadataNames = metadata.outputs.map(\.name)
            if options.normalization == nil, let normalization = metadata.inputs.first?.normalization {
                options.normalization = ImagePreprocessing.Normalization(
                    mean: normalization.mean, std: normalization.std)
            }
            if labels == nil, let file = metadata.outputs.lazy.compactMap({ $0.labelsFile() }).first {
                var packed = PackedFiles.Reader(modelPath: modelPath)
                labels = try LabelMap(
                    text: try packed.text(of: file, what: "labels file"), source: "\(modelPath):\(file.name)")
            }
        }
        try self.init(
            interpreter: interpreter, labels: labels, options: options, model: modelPath, metadataNames: metadataNames)
    }

    /// Creates a detector from a model held in memory.
    ///
    /// - Parameters:
    ///   - modelData: The bytes of a `.tflite` detection model.
    ///   - labels: Its labels, or `nil`.
    ///   - options: The options.
    ///   - name: The model's name, used in errors.
    /// - Throws: The same errors as ``init(modelPath:labelsPath:options:)``.
    public convenience init(
        modelData: Data, labels: LabelMap?, options: Options = Options(), name: String = "model data"
    ) throws {
        let interpreter = try Interpreter(modelData: modelData, options: Self.interpreterOptions(options))
        try self.init(interpreter: interpreter, labels: labels, options: options, model: name)
    }

    init(
        interpreter: Interpreter, labels: LabelMap?, options: Options, model: String, metadataNames: [String?] = []
    ) throws {
        if let maxResults = options.maxResults, maxResults < 1 {
            throw NetRunnerError.invalidOption(name: "maxResults", reason: "must be 1 or more, found \(maxResults)")
        }
        try interpreter.allocateTensors()
        guard interpreter.inputTensorCount >= 1 else {
            throw NetRunnerError.notAnImageModel(model: model, reason: "it has no input")
        }
        let outputTensors = try (0..<interpreter.outputTensorCount).map { try interpreter.output(at: $0) }
        let outputs = try DetectorOutputs.resolve(outputTensors, metadataNames: metadataNames, model: model)
        let input = try interpreter.input(at: 0)
        var anchors: [SSDAnchors.Anchor] = []
        if case .anchors(_, _, let anchorCount, _) = outputs {
            let anchorOptions = options.anchors ?? Self.knownAnchors(input: input, anchorCount: anchorCount)
            guard let anchorOptions else {
                throw NetRunnerError.unsupportedOutputs(
                    model: model,
                    reason: "it outputs \(anchorCount) raw anchor boxes and its anchor layout is unknown; "
                        + "pass Options.anchors")
            }
            anchors = SSDAnchors(options: anchorOptions).anchors
            guard anchors.count == anchorCount else {
                throw NetRunnerError.unsupportedOutputs(
                    model: model,
                    reason: "the anchor options give \(anchors.count) anchors; the model has \(anchorCount)")
            }
        }
        let cropping: ImagePreprocessing.Cropping
        if let chosen = options.cropping {
            cropping = chosen
        } else if case .anchors = outputs {
            cropping = .letterbox
        } else {
            cropping = .stretch
        }
        self.preprocessing = try ImagePreprocessing(
            input: input, cropping: cropping,
            normalization: input.dataType == .float32
                ? (options.normalization ?? .minusOneToOne) : options.normalization,
            model: model)
        self.tensorizer = try ImageTensorizer(preprocessing: preprocessing)
        self.interpreter = interpreter
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

    static func interpreterOptions(_ options: Options) -> Interpreter.Options {
        var interpreterOptions = Interpreter.Options()
        interpreterOptions.threadCount = options.threadCount
        return interpreterOptions
    }

    /// MediaPipe's anchor layouts, recognised by input size and anchor count.
    private static func knownAnchors(input: Tensor, anchorCount: Int) -> SSDAnchors.Options? {
        let shape = input.shape.dimensions
        guard shape.count == 4 else { return nil }
        let known = SSDAnchors.Options.blazeFaceShortRange
        if shape[1] == known.inputHeight, shape[2] == known.inputWidth, anchorCount == 896 { return known }
        return nil
    }

    /// Detects objects in the image file at `path`.
    ///
    /// - Parameter path: A JPEG, PNG, BMP or PNM file.
    /// - Returns: The detections and the time each stage took.
    /// - Throws: ``ImageError`` for a missing, unreadable or corrupt image.
    public func detect(fileAt path: String) throws -> DetectionResult {
        let clock = ContinuousClock()
        let start = clock.now
        let image = try ImageDecoder.decode(contentsOf: path, options: decodingOptions)
        return try detect(image, decodeTime: clock.now - start)
    }

    /// Detects objects in an encoded image held in memory.
    ///
    /// - Parameter data: The bytes of a JPEG, PNG, BMP or PNM file.
    /// - Returns: The detections and the time each stage took.
    /// - Throws: ``ImageError`` for corrupt or unsupported data.
    public func detect(data: Data) throws -> DetectionResult {
        let clock = ContinuousClock()
        let start = clock.now
        let image = try ImageDecoder.decode(data: data, options: decodingOptions)
        return try detect(image, decodeTime: clock.now - start)
    }

    /// Detects objects in pixels (a camera frame, for example).
    ///
    /// - Parameter pixels: The image, in any pixel format.
    /// - Returns: The detections, in the pixels' coordinates.
    /// - Throws: ``ImageError`` for an empty image.
    public func detect(_ pixels: PixelBuffer) throws -> DetectionResult {
        try run(pixels, originalSize: pixels.size, decodeTime: .zero)
    }

    /// Detects objects in an image the decoder returned.
    ///
    /// - Parameters:
    ///   - image: The decoded image.
    ///   - decodeTime: How long decoding took, reported in the result.
    /// - Returns: The detections, in the original image's coordinates.
    /// - Throws: ``ImageError`` for an empty image.
    public func detect(_ image: DecodedImage, decodeTime: Duration = .zero) throws -> DetectionResult {
        try run(image.pixels, originalSize: image.orientedSize, decodeTime: decodeTime)
    }

    /// The decoding options for this model: downscale JPEGs no further than the input needs.
    public var decodingOptions: DecodingOptions {
        preprocessing.decodingOptions(
            maximumPixelCount: options.maximumPixelCount, scalesWhileDecoding: options.scalesWhileDecoding)
    }

    /// Detects objects in an image already turned into this model's input (by an
    /// ``ImagePrefetcher`` given this detector's ``preprocessing``).
    ///
    /// - Parameters:
    ///   - prepared: The prepared input.
    ///   - decodeTime: How long decoding took, reported in the result.
    /// - Returns: The detections, in the original image's coordinates.
    /// - Throws: ``InterpreterError/invalidTensorDataCount(provided:required:)`` when the
    ///   input was prepared for another model.
    public func detect(_ prepared: PreparedImage, decodeTime: Duration = .zero) throws -> DetectionResult {
        let clock = ContinuousClock()
        let start = clock.now
        try interpreter.copy(prepared.input, toInputAt: preprocessing.inputIndex)
        return try finish(
            transform: prepared.transform, preprocessingTime: prepared.preprocessingTime + (clock.now - start),
            decodeTime: decodeTime)
    }

    private func run(_ pixels: PixelBuffer, originalSize: PixelSize, decodeTime: Duration) throws -> DetectionResult {
        let clock = ContinuousClock()
        let start = clock.now
        let transform = try tensorizer.prepare(pixels, originalSize: originalSize)
        try interpreter.copy(tensorizer.input, toInputAt: preprocessing.inputIndex)
        return try finish(transform: transform, preprocessingTime: clock.now - start, decodeTime: decodeTime)
    }

    private func finish(
        transform: ImageTransform, preprocessingTime: Duration, decodeTime: Duration
    ) throws -> DetectionResult {
        let clock = ContinuousClock()
        let prepared = clock.now
        try interpreter.invoke()
        let ran = clock.now
        var detections: [Detection]
        switch outputs {
        case .ssd(let boxes, let classes, let scores, let count):
            detections = try ssdDetections(
                boxes: boxes, classes: classes, scores: scores, count: count, transform: transform)
        case .anchors(let regressors, let scores, _, let coordinates):
            detections = try anchorDetections(
                regressors: regressors, scores: scores, coordinates: coordinates, transform: transform)
        }
        detections.sort { $0.score > $1.score }
        if let maxResults = options.maxResults { detections = Array(detections.prefix(maxResults)) }
        let done = clock.now
        return DetectionResult(
            detections: detections, imageSize: transform.imageSize,
            decodingMilliseconds: decodeTime.inMilliseconds,
            preprocessingMilliseconds: preprocessingTime.inMilliseconds,
            inferenceMilliseconds: (ran - prepared).inMilliseconds,
            postprocessingMilliseconds: (done - ran).inMilliseconds)
    }

    private func floats(_ index: Int) throws -> [Float] {
        let tensor = try interpreter.output(at: index)
        switch tensor.dataType {
        case .float32:
            return tensor.data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        case .uInt8:
            let q = tensor.quantizationParameters ?? QuantizationParameters(scale: 1, zeroPoint: 0)
            return Scores.dequantize(tensor.data, scale: q.scale, zeroPoint: q.zeroPoint)
        case .int8:
            let q = tensor.quantizationParameters ?? QuantizationParameters(scale: 1, zeroPoint: 0)
            return Scores.dequantize(
                tensor.data.lazy.map { Int8(bitPattern: $0) }, scale: q.scale, zeroPoint: q.zeroPoint)
        default:
            throw NetRunnerError.unsupportedOutputs(
                model: "the detector", reason: "output \(index) is \(tensor.dataType)")
        }
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

/// What a detector found in one image, and how long each stage took.
public struct DetectionResult: Equatable, Hashable, Sendable, Codable {
    /// The detections, best score first, in the original image's pixels.
    public var detections: [Detection]
    /// The original image's width (after EXIF orientation).
    public var imageWidth: Int
    /// The original image's height (after EXIF orientation).
    public var imageHeight: Int
    /// Milliseconds spent decoding the file.
    public var decodingMilliseconds: Double
    /// Milliseconds spent resizing and converting the image to the input tensor.
    public var preprocessingMilliseconds: Double
    /// Milliseconds spent in the runtime.
    public var inferenceMilliseconds: Double
    /// Milliseconds spent decoding boxes and suppressing overlaps.
    public var postprocessingMilliseconds: Double

    /// Creates a result.
    ///
    /// - Parameters:
    ///   - detections: The detections.
    ///   - imageSize: The original image's size.
    ///   - decodingMilliseconds: Decoding time.
    ///   - preprocessingMilliseconds: Preprocessing time.
    ///   - inferenceMilliseconds: Inference time.
    ///   - postprocessingMilliseconds: Post-processing time.
    public init(
        detections: [Detection], imageSize: PixelSize, decodingMilliseconds: Double, preprocessingMilliseconds: Double,
        inferenceMilliseconds: Double, postprocessingMilliseconds: Double
    ) {
        self.detections = detections
        self.imageWidth = imageSize.width
        self.imageHeight = imageSize.height
        self.decodingMilliseconds = decodingMilliseconds
        self.preprocessingMilliseconds = preprocessingMilliseconds
        self.inferenceMilliseconds = inferenceMilliseconds
        self.postprocessingMilliseconds = postprocessingMilliseconds
    }
}
