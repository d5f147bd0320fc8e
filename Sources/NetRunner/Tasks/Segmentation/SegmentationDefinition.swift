import FoundationEssentials
import NetRunnerImage
import NetRunnerSupport
import TensorFlowLite

/// The segmenter as a registered task: ``ImageSegmenter`` and ``SegmentationResult``.
///
/// Its part of a results line is `inference_results.segmentation`:
///
///     {"areas": [{"index": 3, "label": "bird", "pixels": 55767}, ...],
///      "mask": {"encoding": "png", "width": 513, "height": 513, "data": "<base64>"}}
///
/// beside `image_width` and `image_height`, the image's size. The mask is a grayscale PNG whose
/// pixel values are the class indices, base64: lossless, a byte per pixel before compression,
/// and masks (large areas of one class) compress to a few kilobytes, where run lengths would
/// need a format of our own and grow with every edge. Any image reader opens it. Its `width`
/// and `height` are the image's, or the model's output's (``CategoryMask/Resolution/model``:
/// it covers the whole image, scaled by `image_width / width`); the areas are the image's
/// pixels either way.
struct SegmentationDefinition: LibraryTaskDefinition {
    typealias Task = ImageSegmenter

    static let names = TaskNames(kind: .segmentation, verb: "segment", model: "segmenter", withArticle: "a segmenter")

    var resultsSchema: String {
        #"""
        {"type": "object", "required": ["areas", "mask"], "additionalProperties": false, "properties": {
          "areas": {"type": "array",
            "description": "Each class found and the image's pixels it covers (image_width x image_height in all, less unknown pixels), largest first: the same whatever the mask's resolution.",
            "items": {"type": "object", "required": ["index", "pixels"], "additionalProperties": false, "properties": {
              "index": {"type": "integer"},
              "label": {"type": "string", "description": "Absent for a model without labels (a bare .tflite): classes by index."},
              "pixels": {"type": "integer", "minimum": 0}}}},
          "mask": {"type": "object",
            "description": "The category mask over the whole image: at the image's size (the CLI's, and serve's with mask=image) or at the model's output resolution (serve's default, 513 x 513 for DeepLab whatever the image). Image pixel (x, y) has the class of mask pixel (floor((x + 0.5) * width / image_width), floor((y + 0.5) * height / image_height)): nearest-neighbour scaling.",
            "required": ["encoding", "width", "height", "data"], "additionalProperties": false, "properties": {
              "encoding": {"type": "string", "enum": ["png"]},
              "width": {"type": "integer", "description": "The mask's width: image_width, or the model output's."},
              "height": {"type": "integer", "description": "The mask's height: image_height, or the model output's."},
              "data": {"type": "string", "description": "Base64 of a grayscale PNG of width x height pixels, each pixel's value its class index (255: unknown)."}}}}}
        """#
    }
    var locatesInImage: Bool { true }

    /// `mask`: the category mask at the model's output resolution (`model`, the server's
    /// default) or at the photo's size (`image`, the library's and the CLI's).
    static let maskOption = TaskAnswerOption(
        name: "mask",
        description: "A segmenter's category mask: model (the default), at the model's output resolution (513 x 513 "
            + "for DeepLab) whatever the image's size; image, at the image's size. Other tasks ignore it.",
        values: [CategoryMask.Resolution.model.rawValue, CategoryMask.Resolution.image.rawValue],
        valuesExplained: "model (the mask at the model's output resolution, the default) or image (at the photo's size)"
    )

    var answerOptions: [TaskAnswerOption] { [Self.maskOption] }

    /// The mask asked for, the model's resolution unless `mask=image`: a server's answer stays
    /// a few kilobytes whatever the photo's size.
    func apply(answerOptions given: [String: String], to options: inout ImageTask.Options) {
        options.maskResolution = given[Self.maskOption.name].flatMap(CategoryMask.Resolution.init(rawValue:)) ?? .model
    }

    /// The category mask as a grayscale PNG, each pixel's value its class index.
    func picture(_ result: SegmentationResult) throws -> TaskPicture? {
        TaskPicture(
            mediaType: "image/png", data: [UInt8](try result.categoryMask.pngData()), imageSize: result.imageSize)
    }
    var assumedPreprocessing: String {
        "RGB, the whole image stretched to the input (no crop), raw bytes for uint8 inputs and values in [-1, 1] "
            + "for float (DeepLab's convention)"
    }

    func names(modelType: String) -> Bool {
        modelType.hasPrefix("image.segmentation")
    }

    /// One output that is a class map of at least 2x2 pixels: integer class indices
    /// `[1, H, W]` (DeepLab's), or scores `[1, H, W, classes]` of at least 2 classes (a
    /// classifier's `[1, 1, 1, classes]` is not one).
    func claims(outputs: [(dimensions: [Int], dataType: Tensor.DataType?)]) -> Bool {
        guard outputs.count == 1, let output = outputs.first, output.dimensions.first == 1,
            output.dimensions.count == 3 || output.dimensions.count == 4,
            output.dimensions[1] >= 2, output.dimensions[2] >= 2
        else { return false }
        if output.dimensions.count == 3 {
            return [.int64, .int32, .uInt8].contains(output.dataType)
        }
        return output.dimensions[3] >= 2 && [.float32, .uInt8, .int8].contains(output.dataType)
    }

    func makeTask(model: LoadedModel, options: ImageTask.Options) throws -> ImageSegmenter {
        try ImageSegmenter(model: model, options: options.segmenterOptions)
    }

    /// `inference_results.segmentation`.
    private struct Line: Codable {
        var areas: [SegmentationArea]
        var mask: Mask
    }

    /// The mask in a results line.
    private struct Mask: Codable {
        var encoding: String
        var width: Int
        var height: Int
        var data: String
    }

    func encode(_ result: SegmentationResult, to encoder: any Encoder) throws {
        var line = encoder.container(keyedBy: ResultsLineKey.self)
        try line.encode(imageSize: result.imageSize)
        let mask = Mask(
            encoding: "png", width: result.categoryMask.width, height: result.categoryMask.height,
            data: try result.categoryMask.pngData().base64EncodedString())
        try encode(results: Line(areas: result.areas, mask: mask), in: &line)
    }

    func decode(from decoder: any Decoder, timings: ResultTimings) throws -> SegmentationResult {
        let (top, results) = try resultsContainers(of: decoder)
        let line = try results.decode(Line.self, forKey: .results(of: kind))
        guard line.mask.encoding == "png", let data = Data(base64Encoded: line.mask.data),
            let mask = try? CategoryMask(pngData: data), mask.width == line.mask.width, mask.height == line.mask.height
        else {
            throw DecodingError.dataCorruptedError(
                forKey: .results(of: kind), in: results,
                debugDescription: "the mask is a base64 grayscale PNG of width x height class indices")
        }
        let imageSize = PixelSize(
            width: try top.decodeIfPresent(Int.self, forKey: "image_width") ?? mask.width,
            height: try top.decodeIfPresent(Int.self, forKey: "image_height") ?? mask.height)
        // A mask at the model's resolution: the areas are the image's pixels, as the line says.
        guard imageSize == PixelSize(width: mask.width, height: mask.height) else {
            return SegmentationResult(
                categoryMask: mask, imageSize: imageSize, areas: line.areas, timings: timings)
        }
        var result = SegmentationResult(categoryMask: mask, labels: nil, timings: timings)
        result.areas = relabelled(result.areas, as: line.areas)
        return result
    }

    func csvFields(_ result: SegmentationResult) -> (answer: String, score: String, results: String) {
        let total = Float(max(result.imageSize.width * result.imageSize.height, 1))
        let best = result.areas.first { $0.index != 0 } ?? result.areas.first
        let areas = result.areas.map { "\(name(of: $0)):\(Float($0.pixels) / total)" }
        return (
            best.map(name) ?? "", best.map { String(Float($0.pixels) / total) } ?? "", areas.joined(separator: ";")
        )
    }

    func textLines(_ result: SegmentationResult, image: String) -> [String] {
        let timing = stageTimes(result.timings)
        let mask = result.categoryMask
        let size = "\(result.imageSize.width)x\(result.imageSize.height)"
        let masked = result.imageSize == PixelSize(width: mask.width, height: mask.height)
        var lines = ["\(image)  \(size)\(masked ? "" : " (mask \(mask.width)x\(mask.height))")  (\(timing))"]
        for area in result.areas {
            let percent = fixedDecimals(Double(result.fraction(of: area.index)) * 100, 2)
            lines.append("  \(percent)%  \(name(of: area))  \(area.pixels) px")
        }
        return lines
    }

    func summary(_ result: SegmentationResult) -> String {
        let areas = result.areas.prefix(4).map {
            "\(name(of: $0)) \(fixedDecimals(Double(result.fraction(of: $0.index)) * 100, 1))%"
        }
        return areas.isEmpty ? "(nothing)" : areas.joined(separator: ", ")
    }

    func shownAnswers(_ result: SegmentationResult) -> [(label: String, score: Float, box: [Float]?)] {
        result.areas.map { (name(of: $0), result.fraction(of: $0.index), nil) }
    }

    func imageSize(_ result: SegmentationResult) -> PixelSize? { result.imageSize }

    /// The image with every pixel of a class other than the background (class 0) blended half
    /// with the class's colour, and the classes' names and shares in the top-left corner.
    func draw(_ result: SegmentationResult, on image: PixelBuffer) throws(ImageError) -> PixelBuffer {
        var canvas = image.format == .rgb24 ? image : image.converted(to: .rgb24)
        let mask = result.categoryMask.resized(to: canvas.size)
        let colors = (0..<256).map { Annotator.color(forClass: $0) }
        let (width, height, stride) = (canvas.width, canvas.height, canvas.bytesPerRow)
        canvas.withUnsafeMutableBytes { bytes in
            for y in 0..<height {
                for x in 0..<width {
                    let index = mask.classIndices[y * width + x]
                    guard index != 0, index != CategoryMask.unknown else { continue }
                    let color = colors[Int(index)]
                    let offset = y * stride + 3 * x
                    bytes[offset] = UInt8((UInt16(bytes[offset]) + UInt16(color.red)) / 2)
                    bytes[offset + 1] = UInt8((UInt16(bytes[offset + 1]) + UInt16(color.green)) / 2)
                    bytes[offset + 2] = UInt8((UInt16(bytes[offset + 2]) + UInt16(color.blue)) / 2)
                }
            }
        }
        let legend = result.areas.filter { $0.index != 0 }.prefix(5)
            .map { (name(of: $0), result.fraction(of: $0.index), $0.index) }
        return Annotator.drawLabels(Array(legend), on: canvas)
    }

    /// The mask at the target's size and its areas counted there; a mask at the model's
    /// resolution stays as it is, its areas counted as it would be at the target's size.
    func scaled(_ result: SegmentationResult, from size: PixelSize, to target: PixelSize) -> SegmentationResult {
        var scaled = result
        let mask = result.categoryMask
        scaled.imageSize = target
        if result.imageSize != PixelSize(width: mask.width, height: mask.height) {
            let counts = mask.classCounts(resizedTo: target)
            scaled.areas = relabelled(SegmentationResult.areas(counts: counts, labels: nil), as: result.areas)
            return scaled
        }
        scaled.categoryMask = mask.resized(to: target)
        scaled.areas = relabelled(
            SegmentationResult(categoryMask: scaled.categoryMask, labels: nil).areas, as: result.areas)
        return scaled
    }

    /// Areas counted again, with the labels the same classes had.
    private func relabelled(_ areas: [SegmentationArea], as labelled: [SegmentationArea]) -> [SegmentationArea] {
        areas.map { area in
            var area = area
            area.label = labelled.first { $0.index == area.index }?.label
            return area
        }
    }

    private func name(of area: SegmentationArea) -> String {
        area.label ?? "class \(area.index)"
    }
}
