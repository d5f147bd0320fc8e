public import FoundationEssentials
public import NetRunner
import NetRunnerSupport

/// A Net Runner headless test bundle's `test.json`: which models to run on which images, how
/// often, scored by which metric, against which expected answers.
///
/// The fields are Net Runner's: `name`, `id`, `version`, `models` (model ids, resolved against a
/// models folder), `options` (`iterations`, `metric`: an `EvaluationMetric` class name such as
/// `EvaluationMetricAccuracyTop5`), `images` (`{"type": "file", "path": ...}` relative to the
/// bundle, or `{"type": "url", "url": ...}`) and `labels` (`{"path": ..., "inference_results":
/// {"classification": {"<label>": ""}}}`, or for detectors `{"detection": [{"label": ...,
/// "box": [x, y, width, height]}]}`).
public struct TestBundleDescription: Equatable, Sendable {
    /// Where an image comes from.
    public enum ImageSource: Equatable, Hashable, Sendable {
        /// A file, relative to the test bundle's folder.
        case file(String)
        /// A URL.
        case url(String)
    }

    /// The test's display name.
    public var name: String
    /// The test's identifier.
    public var id: String
    /// The test's version.
    public var version: String
    /// The ids of the models to run.
    public var models: [String]
    /// How many times each model runs on each image (at least 1).
    public var iterations: Int
    /// The metric's name, as written.
    public var metric: String
    /// The images, in the file's order.
    public var images: [ImageSource]
    /// The expected classes for an image path or URL.
    ///
    /// Net Runner reads the first key of the
    /// `classification` object; JSON objects have no order, so every key listed counts as a
    /// right answer.
    public var expectedClassifications: [String: Set<String>]
    /// The expected objects for an image path or URL (NetRunner's extension for detectors:
    /// `"inference_results": {"detection": [{"label": "face", "box": [x, y, width, height]}]}`,
    /// COCO's box form in pixels of the image as displayed; an empty list for no object).
    public var expectedDetections: [String: [MeanAveragePrecision.LabeledBox]] = [:]
    /// The labels of registered tasks other than classification and detection, by image path
    /// or URL and task: the JSON of `inference_results.<task>`, for the task's
    /// ``TaskEvaluation`` to read (``labels(of:)``).
    public var otherLabels: [String: [String: Data]] = [:]
    /// The test bundle's folder, when it was read from one (``TestBundle``): labels that name
    /// files (a segmentation mask) are read from it.
    public var folder: String? = nil

    /// The labels of a registered task other than classification and detection.
    ///
    /// - Parameter kind: The task.
    /// - Returns: The JSON of `inference_results.<task>`, by image path or URL.
    public func labels(of kind: ImageTask.Kind) -> [String: Data] {
        otherLabels.compactMapValues { $0[kind.rawValue] }
    }

    /// Parses and validates a `test.json`, reporting every problem at once with its JSON path.
    ///
    /// Checked: required fields and their types, at least one model and image, positive
    /// iterations, image types, image paths inside the bundle (no absolute paths, no `..`),
    /// labels naming images the test lists, labels in the classification or detection form, each image
    /// labelled at most once. Whether the metric and models exist is checked when the test runs.
    ///
    /// - Parameters:
    ///   - data: The file's bytes.
    ///   - source: The file's name, for errors.
    /// - Returns: The description.
    /// - Throws: ``EvaluationError/malformedJSON(file:reason:)``,
    ///   ``EvaluationError/invalidTestDescription(file:problems:)``.
    public static func parse(_ data: Data, source: String = "test.json") throws(EvaluationError)
        -> TestBundleDescription
    {
        let json: JSONValue
        do {
            json = try JSONValue.parse(data, source: source)
        } catch {
            throw .malformedJSON(file: error.file, reason: error.reason)
        }
        var reader = TestReader()
        let test = reader.test(json)
        guard reader.problems.isEmpty, let test else {
            throw .invalidTestDescription(file: source, problems: reader.problems)
        }
        return test
    }
}

/// Walks a `test.json`, collecting every problem.
private struct TestReader {
    var problems: [EvaluationError.Problem] = []

    mutating func problem(_ path: String, _ expected: String, _ found: JSONValue?) {
        problems.append(.init(path: path, expected: expected, found: found?.shown ?? "missing"))
    }

    mutating func string(_ object: [String: JSONValue], _ key: String, at path: String) -> String? {
        if case .string(let value)? = object[key], !value.isEmpty { return value }
        problem(path + key, "a non-empty string", object[key])
        return nil
    }

    mutating func test(_ json: JSONValue) -> TestBundleDescription? {
        guard case .object(let root) = json else {
            problem("$", "an object", json)
            return nil
        }
        let name = string(root, "name", at: "$.")
        let id = string(root, "id", at: "$.")
        // Versions are strings in Net Runner's examples; a number is accepted too.
        var version: String?
        if case .number(let number)? = root["version"] {
            version = JSONValue.text(of: number)
        } else {
            version = string(root, "version", at: "$.")
        }

        var models: [String] = []
        if case .array(let list)? = root["models"], !list.isEmpty {
            for (i, item) in list.enumerated() {
                if case .string(let model) = item, !model.isEmpty {
                    models.append(model)
                } else {
                    problem("$.models[\(i)]", "a model id", item)
                }
            }
        } else {
            problem("$.models", "a non-empty array of model ids", root["models"])
        }

        var iterations = 1
        var metric: String?
        if case .object(let options)? = root["options"] {
            switch options["iterations"] {
            case nil: break
            case .number(let n)? where n >= 1 && n <= 1_000_000 && n == n.rounded(): iterations = Int(n)
            case let other: problem("$.options.iterations", "a whole number from 1 to 1000000", other)
            }
            metric = string(options, "metric", at: "$.options.")
        } else {
            problem("$.options", "an object with iterations and metric", root["options"])
        }

        var images: [TestBundleDescription.ImageSource] = []
        if case .array(let list)? = root["images"], !list.isEmpty {
            for (i, item) in list.enumerated() {
                if let image = image(item, at: "$.images[\(i)]") { images.append(image) }
            }
        } else {
            problem("$.images", "a non-empty array of images", root["images"])
        }

        let known = Set(images.map(\.key))
        var expected: [String: Set<String>] = [:]
        var expectedBoxes: [String: [MeanAveragePrecision.LabeledBox]] = [:]
        var otherLabels: [String: [String: Data]] = [:]
        var labelled: Set<String> = []
        switch root["labels"] {
        case nil: break
        case .array(let list)?:
            for (i, item) in list.enumerated() {
                let path = "$.labels[\(i)]"
                guard case .object(let label) = item else {
                    problem(path, "an object with path and inference_results", item)
                    continue
                }
                guard let image = string(label, "path", at: path + ".") else { continue }
                if !known.contains(image) {
                    problem(path + ".path", "a path or url listed in $.images", .string(image))
                }
                if !labelled.insert(image).inserted {
                    problem(path + ".path", "an image labelled once", .string(image))
                }
                guard case .object(let results)? = label["inference_results"] else {
                    problem(path + ".inference_results", "an object", label["inference_results"])
                    continue
                }
                if results["classification"] == nil, results["detection"] == nil,
                    let (key, value) = results.first(where: {
                        TaskEvaluationRegistry.evaluation(for: ImageTask.Kind($0.key)) != nil
                    })
                {
                    otherLabels[image, default: [:]][key] = value.data
                    continue
                }
                if results["classification"] == nil, let objects = results["detection"] {
                    if let boxes = detections(objects, at: path + ".inference_results.detection") {
                        expectedBoxes[image] = boxes
                    }
                    continue
                }
                guard case .object(let classes)? = results["classification"], !classes.isEmpty else {
                    problem(
                        path + ".inference_results.classification",
                        "an object whose keys are the expected labels", results["classification"])
                    continue
                }
                expected[image] = Set(classes.keys)
            }
        case let other: problem("$.labels", "an array of labels", other)
        }

        guard let name, let id, let version, let metric, problems.isEmpty else { return nil }
        return TestBundleDescription(
            name: name, id: id, version: version, models: models, iterations: iterations, metric: metric,
            images: images, expectedClassifications: expected, expectedDetections: expectedBoxes,
            otherLabels: otherLabels)
    }

    /// `[{"label": "face", "box": [x, y, width, height]}, ...]`, pixels of the image as shown.
    mutating func detections(_ json: JSONValue, at path: String) -> [MeanAveragePrecision.LabeledBox]? {
        guard case .array(let list) = json else {
            problem(path, "an array of {label, box}", json)
            return nil
        }
        var boxes: [MeanAveragePrecision.LabeledBox] = []
        for (i, item) in list.enumerated() {
            let itemPath = "\(path)[\(i)]"
            guard case .object(let object) = item else {
                problem(itemPath, "an object with label and box", item)
                continue
            }
            let label = string(object, "label", at: itemPath + ".")
            var numbers: [Double] = []
            if case .array(let values)? = object["box"] {
                numbers = values.compactMap { if case .number(let n) = $0, n.isFinite, abs(n) < 1e9 { n } else { nil } }
                if numbers.count != values.count { numbers = [] }
            }
            guard numbers.count == 4, numbers[2] >= 0, numbers[3] >= 0 else {
                problem(
                    itemPath + ".box", "[x, y, width, height] in pixels, width and height not negative", object["box"])
                continue
            }
            guard let label else { continue }
            let (x, y, width, height) = (Float(numbers[0]), Float(numbers[1]), Float(numbers[2]), Float(numbers[3]))
            boxes.append(
                .init(label: label, box: BoundingBox(minX: x, minY: y, maxX: x + width, maxY: y + height)))
        }
        return boxes.count == list.count ? boxes : nil
    }

    mutating func image(_ json: JSONValue, at path: String) -> TestBundleDescription.ImageSource? {
        guard case .object(let image) = json else {
            problem(path, "an object with type and path or url", json)
            return nil
        }
        switch image["type"] {
        case .string("file")?:
            guard let file = string(image, "path", at: path + ".") else { return nil }
            if file.hasPrefix("/") || file.split(separator: "/").contains("..") {
                problem(path + ".path", "a path inside the test bundle", .string(file))
                return nil
            }
            return .file(file)
        case .string("url")?:
            guard let url = string(image, "url", at: path + ".") else { return nil }
            return .url(url)
        case let other:
            problem(path + ".type", "\"file\" or \"url\"", other)
            return nil
        }
    }
}

extension TestBundleDescription.ImageSource {
    /// The path or URL, as labels name the image.
    public var key: String {
        switch self {
        case .file(let path): return path
        case .url(let url): return url
        }
    }
}
