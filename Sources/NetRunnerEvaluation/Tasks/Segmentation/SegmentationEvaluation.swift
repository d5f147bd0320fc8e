import FoundationEssentials
import NetRunner
import NetRunnerImage
import NetRunnerSupport

/// Evaluating segmenters: mean IoU over the classes present and pixel accuracy, both reported
/// whichever the test names (``MaskCounts`` says how), the counts of every image added up.
///
/// A test bundle labels an image `{"inference_results": {"segmentation": {"mask":
/// "masks/bird.png"}}}`: a grayscale PNG in the bundle whose pixel values are the model's class
/// indices, 255 for pixels not scored (Pascal VOC's outlines), at the image's size (another
/// size is made the image's by nearest neighbour, as is an answer's mask at the model's
/// resolution: the image's pixels are scored whichever). The report's `metric` holds `mean_iou` and
/// `pixel_accuracy`; its breakdown IoU per class. An image is right when its own mean IoU is at
/// least 0.5.
struct SegmentationEvaluation: TaskEvaluation {
    /// The evaluation.
    init() {}

    var kind: ImageTask.Kind { .segmentation }
    var metricNames: [String] { ["mean_iou", "mIoU", "pixel_accuracy", "EvaluationMetricMeanIoU"] }
    var labelForm: String { "inference_results.segmentation masks" }
    var labelNoun: String { "segmentation masks" }
    var metricNoun: String { "a segmentation metric such as mean_iou" }

    /// The mean IoU from which an image counts as right.
    static let rightIoU = 0.5
    /// The largest label mask read, in bytes.
    static let maximumMaskBytes = 64 << 20

    func metric(named name: String) -> TestMetric? {
        switch name.lowercased() {
        case "mean_iou", "miou", "pixel_accuracy", "evaluationmetricmeaniou": TestMetric(kind: kind, name: name)
        default: nil
        }
    }

    /// `{"mask": "masks/x.png"}`.
    private struct Label: Decodable {
        var mask: String
    }

    func labelledImages(in test: TestBundleDescription) -> Int { test.labels(of: kind).count }

    func rightAnswerRule(_ model: ModelReport, metric: String) -> String {
        "a mean IoU of at least 0.5 on the image"
    }

    /// An image's label mask, read from the test bundle (never from outside it).
    private func mask(_ data: Data, folder: String?) -> Result<CategoryMask, LabelProblem> {
        guard let label = try? JSONDecoder().decode(Label.self, from: data), !label.mask.isEmpty else {
            return .failure(.init(text: "a segmentation label is {\"mask\": \"<a PNG in the bundle>\"}"))
        }
        guard let folder else { return .failure(.init(text: "\(label.mask): the test has no folder to read it from")) }
        do {
            let bytes = try ContainedFolder(folder, name: "the test bundle")
                .contents(of: label.mask, maximumSize: Self.maximumMaskBytes)
            return .success(try CategoryMask(pngData: bytes))
        } catch {
            return .failure(.init(text: "\(label.mask): \(error)"))
        }
    }

    func score(
        _ report: inout ModelReport, test: TestBundleDescription, metric: TestMetric, images: [String],
        answers: [String: ImageAnswer]
    ) {
        let labels = test.labels(of: kind)
        var total = MaskCounts()
        var names: [Int: String] = [:]
        var perImage: [(image: String, counts: MaskCounts, found: [SegmentationArea])] = []
        for image in images {
            guard let data = labels[image] else { continue }
            let truth: CategoryMask
            switch mask(data, folder: test.folder) {
            case .success(let value): truth = value
            case .failure(let problem):
                report.failures.append(.init(image: image, error: "its label is not scored: \(problem.text)"))
                continue
            }
            guard case .other(let result as SegmentationResult)? = answers[image] else { continue }
            for area in result.areas { if let label = area.label { names[area.index] = label } }
            let counts = MaskCounts(Self.imageMask(of: result), label: truth)
            total.add(counts)
            perImage.append((image, counts, result.areas))
        }
        // Classes no answer named: Pascal VOC's names when every name the answers gave is.
        let pascal = ImageSegmenter.pascalVOCLabels
        let isPascal = !names.isEmpty && names.allSatisfy { $0.key < pascal.count && pascal[$0.key] == $0.value }
        let name = { (index: Int) in
            names[index] ?? (isPascal && index < pascal.count ? pascal[index] : "class \(index)")
        }
        for (image, counts, found) in perImage {
            let expected = counts.presentClasses.filter { counts.truePositives[$0] + counts.falseNegatives[$0] > 0 }
            report.examples.append(
                .init(
                    image: image, expected: expected.map(name), expectedBoxes: nil,
                    answers: found.filter { counts.presentClasses.contains($0.index) }.map {
                        .init(label: name($0.index), score: Float(counts.intersectionOverUnion(of: $0.index)), box: nil)
                    }, correct: counts.meanIntersectionOverUnion >= Self.rightIoU))
        }
        report.metric = ["mean_iou": total.meanIntersectionOverUnion, "pixel_accuracy": total.pixelAccuracy]
        report.breakdown = .init(
            title: "IoU per class (TP / (TP + FP + FN) over the labelled pixels)", labelHeading: "Class",
            countHeading: "Labelled pixels", valueHeadings: ["IoU"],
            rows: total.presentClasses.map {
                .init(
                    label: name($0), count: total.truePositives[$0] + total.falseNegatives[$0],
                    values: [total.intersectionOverUnion(of: $0)])
            })
    }

    /// Two masks agree when they give the same class to at least 99.5% of the pixels.
    func agreement(of answer: ImageAnswer, with baseline: ImageAnswer) -> (same: Bool, scoreDifference: Double?)? {
        guard case .other(let mine as SegmentationResult) = answer,
            case .other(let theirs as SegmentationResult) = baseline
        else { return nil }
        guard mine.imageSize == theirs.imageSize, !mine.categoryMask.classIndices.isEmpty else { return (false, nil) }
        let (a, b) = (Self.imageMask(of: mine), Self.imageMask(of: theirs))
        let same = zip(a.classIndices, b.classIndices).count { $0 == $1 }
        return (Double(same) >= 0.995 * Double(a.classIndices.count), nil)
    }

    /// An answer's mask at the image's size (one at the model's resolution scaled by nearest
    /// neighbour, as the segmenter would have made it).
    static func imageMask(of result: SegmentationResult) -> CategoryMask {
        result.categoryMask.resized(to: result.imageSize)
    }
}
