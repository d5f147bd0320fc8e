import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import TensorFlowLite
import Testing

@testable import NetRunner

#if canImport(Glibc)
    import Glibc
#endif

/// DeepLab v3 on Coral's bird photo and on the squat photo, against Python's masks
/// (`tools/pose/record.sh`: ai_edge_litert, Pillow BILINEAR to the input, NEAREST back) and
/// Coral's own bird mask.
@Suite("Image segmentation")
struct ImageSegmenterTests {
    /// The bundle: the model with Pascal VOC's labels (the bare model names no class).
    static let model = "Models/bundles/deeplabv3_mnv2_pascal_quant.tiobundle"

    static func mask(_ path: String) throws -> CategoryMask {
        try CategoryMask(pngData: try Fixtures.data(path))
    }

    static func agreement(_ a: CategoryMask, _ b: CategoryMask) -> Double {
        guard a.width == b.width, a.height == b.height else { return 0 }
        let same = zip(a.classIndices, b.classIndices).count { $0 == $1 }
        return Double(same) / Double(a.classIndices.count)
    }

    @Test("The bird: Python's mask on >= 99.5% of pixels, Coral's as closely as Python")
    func bird() throws {
        let segmenter = try ImageSegmenter(modelPath: Fixtures.path(Self.model))
        let result = try segmenter.run(.file(Fixtures.path("Tests/Fixtures/Segmentation/bird_segmentation.png")))
        #expect(result.categoryMask.width == 513 && result.categoryMask.height == 513)
        let python = try Self.mask("Tests/Fixtures/Segmentation/bird_segmentation.python_mask.png")
        let coral = try Self.mask("Tests/Fixtures/Segmentation/bird_segmentation_mask.png")
        let withPython = Self.agreement(result.categoryMask, python)
        let withCoral = Self.agreement(result.categoryMask, coral)
        let pythonWithCoral = Self.agreement(python, coral)
        print("segmentation bird: vs Python \(withPython), vs Coral \(withCoral) (Python vs Coral \(pythonWithCoral))")
        #expect(withPython >= 0.995)
        #expect(withCoral >= pythonWithCoral - 0.002)
        let bird = try #require(result.areas.first { $0.index != 0 })
        #expect(bird.label == "bird" && bird.index == 3)
        #expect(result.areas.map(\.pixels).reduce(0, +) == 513 * 513)
    }

    @Test("The squat photo (500x610): resized to 513x513 and back, Python's mask on >= 99.5% of pixels")
    func squat() throws {
        var options = ImageTask.Options()
        options.kind = .segmentation
        let task = try ImageTask(modelAt: Fixtures.path(Self.model), options: options)
        let answer = try task.run(fileAt: Fixtures.path("Tests/Fixtures/Pose/squat.png"))
        let result = try #require(answer.result as? SegmentationResult)
        let python = try Self.mask("Tests/Fixtures/Segmentation/squat.python_mask.png")
        let withPython = Self.agreement(result.categoryMask, python)
        print("segmentation squat: vs Python \(withPython)")
        #expect(result.categoryMask.width == 500 && result.categoryMask.height == 610)
        #expect(withPython >= 0.995)
        #expect(result.areas.first { $0.index != 0 }?.label == "person")

        let image = try ImageDecoder.decode(contentsOf: Fixtures.path("Tests/Fixtures/Pose/squat.png")).pixels
        let drawn = try Annotator.draw(answer, on: image)
        #expect(drawn.size == image.size && drawn != image)
        let half = PixelSize(width: 250, height: 305)
        let scaled = try #require(answer.scaled(from: image.size, to: half).result as? SegmentationResult)
        #expect(scaled.imageSize == half && scaled.areas.map(\.pixels).reduce(0, +) == 250 * 305)
    }

    @Test("maskResolution .model: the model's 513x513 mask, the photo-size one scaled back, the same areas")
    func modelResolution() throws {
        let photo = Fixtures.path("Tests/Fixtures/Pose/squat.png")
        let segmenter = try ImageSegmenter(modelPath: Fixtures.path(Self.model))
        #expect(segmenter.options.maskResolution == .image)
        let full = try segmenter.run(.file(photo))
        var options = ImageSegmenter.Options()
        options.maskResolution = .model
        let small = try ImageSegmenter(modelPath: Fixtures.path(Self.model), options: options).run(.file(photo))
        let size = PixelSize(width: 500, height: 610)
        #expect(full.categoryMask.width == 500 && full.imageSize == size)
        #expect(small.categoryMask.width == 513 && small.categoryMask.height == 513 && small.imageSize == size)
        let scaledBack = small.categoryMask.resized(to: size) == full.categoryMask
        #expect(scaledBack, "the model's mask scaled to the photo is not the photo-size mask")
        #expect(small.areas == full.areas && small.fraction(of: 15) == full.fraction(of: 15))
        #expect(small.areas.map(\.pixels).reduce(0, +) == 500 * 610)

        // Through ImageTask: the result options carry it; nil is the image's size.
        var taskOptions = ImageTask.Options()
        taskOptions.kind = .segmentation
        #expect(taskOptions.segmenterOptions.maskResolution == .image)
        taskOptions.maskResolution = .model
        #expect(taskOptions.segmenterOptions.maskResolution == .model)
        let task = try ImageTask(modelAt: Fixtures.path(Self.model), options: taskOptions)
        let answer = try task.run(fileAt: photo)
        let result = try #require(answer.result as? SegmentationResult)
        let same = result.categoryMask == small.categoryMask
        #expect(same && result.areas == small.areas && result.imageSize == size)

        // Its results line: the photo's size, the model's mask, the photo's areas; read back the same.
        let record = ResultsLine(image: "squat.png", model: "deeplab", answer: answer)
        let data = try JSONEncoder().encode(record)
        let object = try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["image_width"] as? Int == 500 && object["image_height"] as? Int == 610)
        let mask = (object["inference_results"] as? [String: Any]).flatMap { $0["segmentation"] as? [String: Any] }
        #expect((mask?["mask"] as? [String: Any])?["width"] as? Int == 513)
        let read = try #require(
            try JSONDecoder().decode(ResultsLine.self, from: data).answer?.result as? SegmentationResult)
        let readMask = read.categoryMask == small.categoryMask
        #expect(readMask && read.areas == small.areas && read.imageSize == size)
        let text = VisionTaskRegistry.definition(for: .segmentation)?.textLines(answer: answer, image: "squat.png")
        #expect(text?.first?.hasPrefix("squat.png  500x610 (mask 513x513)") == true, "\(text ?? [])")

        // Drawn and scaled as the photo-size answer is.
        let image = try ImageDecoder.decode(contentsOf: photo).pixels
        let drawn = try Annotator.draw(answer, on: image) == Annotator.draw(full.imageAnswer, on: image)
        #expect(drawn, "the model-size mask draws another picture")
        let half = PixelSize(width: 250, height: 305)
        let scaled = try #require(answer.scaled(from: image.size, to: half).result as? SegmentationResult)
        let scaledFull = try #require(full.imageAnswer.scaled(from: image.size, to: half).result as? SegmentationResult)
        #expect(scaled.imageSize == half && scaled.categoryMask.width == 513)
        // Counted as the model's mask scaled to half the photo (the photo-size mask halved is a
        // second resampling: a few pixels of the outline differ).
        var counts = [Int](repeating: 0, count: 256)
        for index in small.categoryMask.resized(to: half).classIndices { counts[Int(index)] += 1 }
        #expect(scaled.areas.map(\.pixels) == scaled.areas.map { counts[$0.index] })
        #expect(
            scaled.areas.map(\.pixels).reduce(0, +) == 250 * 305 && scaled.areas.map(\.label) == full.areas.map(\.label)
        )
        #expect(abs(scaled.fraction(of: 15) - scaledFull.fraction(of: 15)) < 0.005)
    }

    @Test("The image's class counts without its mask, for a crop and a letterbox too; a grid over the image")
    func countsWithoutMask() {
        let small: [UInt8] = [1, 2, 3, 4, 5, 6]  // 3x2
        let transforms = [
            ImageTransform(
                region: PixelRect(x: 0, y: 0, width: 7, height: 5), decodedSize: PixelSize(width: 7, height: 5),
                imageSize: PixelSize(width: 7, height: 5)),
            ImageTransform(
                region: PixelRect(x: 2, y: 1, width: 5, height: 3), decodedSize: PixelSize(width: 9, height: 6),
                imageSize: PixelSize(width: 9, height: 6)),
            ImageTransform(
                letterbox: PixelRect(x: 0, y: 1, width: 3, height: 1), inputSize: PixelSize(width: 3, height: 3),
                decodedSize: PixelSize(width: 12, height: 4), imageSize: PixelSize(width: 12, height: 4)),
        ]
        for transform in transforms {
            let mask = ImageSegmenter.mask(small, width: 3, height: 2, transform: transform)
            var counts = [Int](repeating: 0, count: 256)
            for index in mask.classIndices { counts[Int(index)] += 1 }
            #expect(ImageSegmenter.classCounts(small, width: 3, height: 2, transform: transform) == counts)
            // A grid of the image's own size is the image-size mask.
            #expect(
                ImageSegmenter.mask(small, width: 3, height: 2, transform: transform, size: transform.imageSize) == mask
            )
        }
        // The whole image stretched to the input, at the output's size: the class map itself.
        let grid = ImageSegmenter.mask(
            small, width: 3, height: 2, transform: transforms[0], size: PixelSize(width: 3, height: 2))
        #expect(grid.classIndices == small)
        // A crop's grid over the whole image: unknown where the input did not come from.
        let cropped = ImageSegmenter.mask(
            small, width: 3, height: 2, transform: transforms[1], size: PixelSize(width: 3, height: 2))
        #expect(cropped.classIndices.first == CategoryMask.unknown)
        // Counting a mask as it would be resized, without resizing it.
        let mask = CategoryMask(width: 3, height: 2, classIndices: small)
        for size in [PixelSize(width: 7, height: 5), PixelSize(width: 2, height: 1), PixelSize(width: 3, height: 2)] {
            var counts = [Int](repeating: 0, count: 256)
            for index in mask.resized(to: size).classIndices { counts[Int(index)] += 1 }
            #expect(mask.classCounts(resizedTo: size) == counts, "\(size)")
        }
    }

    @Test("A model type image.segmentation.* picks the task; the dm05 model runs too")
    func modelType() throws {
        #expect(ImageTask.kind(type: "image.segmentation.deeplab") == .segmentation)
        #expect(VisionTaskRegistry.definition(verb: "segment")?.locatesInImage == true)
        let segmenter = try ImageSegmenter(modelPath: Fixtures.path("Models/deeplabv3_mnv2_dm05_pascal_quant.tflite"))
        let result = try segmenter.run(.file(Fixtures.path("Tests/Fixtures/Segmentation/bird_segmentation.png")))
        // A bare class-index model names no class: Pascal VOC's and Cityscapes' look alike.
        #expect(segmenter.labels == nil && result.areas.contains { $0.index == 3 && $0.label == nil })
    }

    @Test("Score outputs: the best class of each pixel, the first of equal scores, as numpy's argmax")
    func scores() {
        // 1x2 pixels, 3 classes: pixel 0 best is 2, pixel 1 ties 0 and 1.
        let floats: [Float] = [0.1, 0.2, 0.7, 0.5, 0.5, 0.0]
        let data = floats.withUnsafeBytes { Data($0) }
        let output = ImageSegmenter.Output.scores(height: 1, width: 2, classes: 3)
        #expect(ImageSegmenter.classIndices(of: data, type: .float32, output: output) == [2, 0])
        let bytes = Data([10, 200, 3, 7, 7, 1])
        #expect(ImageSegmenter.classIndices(of: bytes, type: .uInt8, output: output) == [1, 0])
        let ids = [Int64(3), 300].withUnsafeBytes { Data($0) }
        let classIndices = ImageSegmenter.Output.classIndices(height: 1, width: 2)
        #expect(ImageSegmenter.classIndices(of: ids, type: .int64, output: classIndices) == [3, CategoryMask.unknown])
    }

    @Test("The mask is made at the image's size by nearest neighbour, a byte per pixel")
    func upscale() {
        let small: [UInt8] = [1, 2, 3, 4]  // 2x2
        let transform = ImageTransform(
            region: PixelRect(x: 0, y: 0, width: 4, height: 6), decodedSize: PixelSize(width: 4, height: 6),
            imageSize: PixelSize(width: 4, height: 6))
        let mask = ImageSegmenter.mask(small, width: 2, height: 2, transform: transform)
        #expect(mask.classIndices == [1, 1, 2, 2, 1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4, 3, 3, 4, 4])
        // A 4000x3000 image: its mask is 12 MB, whatever the number of classes.
        let large = ImageTransform(
            region: PixelRect(x: 0, y: 0, width: 4000, height: 3000), decodedSize: PixelSize(width: 4000, height: 3000),
            imageSize: PixelSize(width: 4000, height: 3000))
        #expect(ImageSegmenter.mask(small, width: 2, height: 2, transform: large).classIndices.count == 12_000_000)
    }

    @Test("A 24-megapixel photo: the mask is a byte per pixel, no full-size score map per class")
    func hugePhoto() throws {
        let segmenter = try ImageSegmenter(
            modelPath: Fixtures.path("Models/bundles/deeplabv3_mnv2_dm05_pascal_quant.tiobundle"))
        let photo = try PixelBuffer(width: 6000, height: 4000, format: .rgb24)
        func peakMegabytes() -> Int {
            var usage = rusage()
            getrusage(RUSAGE_SELF.rawValue, &usage)
            return usage.ru_maxrss / 1024
        }
        let before = peakMegabytes()
        let result = try segmenter.run(.pixels(photo))
        let grown = peakMegabytes() - before
        #expect(result.categoryMask.width == 6000 && result.categoryMask.height == 4000)
        #expect(result.categoryMask.classIndices.count == 24_000_000)
        #expect(result.areas.map(\.pixels).reduce(0, +) == 24_000_000)
        // 21 float scores per pixel at full size would be 2 GB; the label map and the mask are
        // 24 MB (other tests running beside this one may raise the peak a little too).
        print("segmentation 24 MP: peak RSS grew \(grown) MB")
        #expect(grown < 1024, "peak RSS grew \(grown) MB")
    }

    @Test("A classifier loaded as a segmenter is refused, naming its output's shape")
    func wrongModel() throws {
        var options = ImageTask.Options()
        options.kind = .segmentation
        let error = #expect(throws: NetRunnerError.self) {
            _ = try ImageTask(modelAt: Fixtures.path(Fixtures.MobileNet.uint8), options: options)
        }
        let message = error?.localizedDescription ?? ""
        #expect(message.contains("[1, height, width]") && message.contains("uint8 [1, 1000]"), "\(message)")
        // MoveNet's keypoints are no 1x17 map of 3 classes.
        let keypoints = #expect(throws: NetRunnerError.self) {
            _ = try ImageTask(
                modelAt: Fixtures.path("Models/movenet_single_pose_lightning_ptq.tflite"), options: options)
        }
        let refusal = keypoints?.localizedDescription ?? ""
        #expect(refusal.contains("float32 [1, 1, 17, 3]") && refusal.contains("at least 2x2"), "\(refusal)")
    }

    @Test("The results line round-trips: the areas and the mask as a base64 PNG")
    func resultsLine() throws {
        let mask = CategoryMask(width: 3, height: 2, classIndices: [0, 3, 3, 0, 15, 255])
        let result = SegmentationResult(
            categoryMask: mask, labels: LabelMap(labels: ImageSegmenter.pascalVOCLabels), decodingMilliseconds: 1.5,
            preprocessingMilliseconds: 2, inferenceMilliseconds: 3)
        #expect(result.areas.map(\.index) == [0, 3, 15] && result.areas.map(\.pixels) == [2, 2, 1])
        let record = ResultsLine(image: "bird.png", model: "deeplab", answer: result.imageAnswer)
        let data = try JSONEncoder().encode(record)
        let object = try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
        let line = try #require((object["inference_results"] as? [String: Any])?["segmentation"] as? [String: Any])
        #expect((line["mask"] as? [String: Any])?["encoding"] as? String == "png")
        #expect((line["areas"] as? [[String: Any]])?[1]["label"] as? String == "bird")
        #expect(try JSONDecoder().decode(ResultsLine.self, from: data) == record)
    }
}
