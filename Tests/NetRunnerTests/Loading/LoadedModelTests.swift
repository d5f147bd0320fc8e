import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

@testable import NetRunner

@Suite("One way to load a model: LoadedModel and the preprocessing rule")
struct LoadedModelTests {
    static let faceBundle = "Models/bundles/face_detection_short_range.tiobundle"
    static let floatBundle = "Models/bundles/mobilenet_v2_1.0_224_float32.tiobundle"
    static let portrait = "Tests/Fixtures/Photos/test/grace_hopper.jpg"
    static let cat = "Tests/Fixtures/Photos/test/chelsea.png"

    /// A copy of a bundle whose image input is described as BGR.
    static func bgrCopy(of bundle: String, in folder: TemporaryFolder) throws -> String {
        let copy = folder.path("bgr.tiobundle")
        try FileManager.default.copyItem(atPath: Fixtures.path(bundle), toPath: copy)
        let json = copy + "/model.json"
        let text = try String(contentsOfFile: json, encoding: .utf8)
        #expect(text.contains("\"format\": \"RGB\""))
        try text.replacingOccurrences(of: "\"format\": \"RGB\"", with: "\"format\": \"BGR\"")
            .write(toFile: json, atomically: true, encoding: .utf8)
        return copy
    }

    /// The image with its red and blue channels exchanged.
    static func swapped(_ pixels: PixelBuffer) throws -> PixelBuffer {
        let rgba = pixels.converted(to: .rgba32)
        return try PixelBuffer(
            width: rgba.size.width, height: rgba.size.height, format: .bgra32, bytes: rgba.packedBytes)
    }

    @Test("A detector bundle path works for the detector, as a classifier bundle does for the classifier")
    func detectorFromBundlePath() throws {
        let detector = try ObjectDetector(modelPath: Fixtures.path(Self.faceBundle))
        let faces = try detector.detect(fileAt: Fixtures.path(Self.portrait)).detections
        #expect(faces.count == 1)
        #expect(faces.first?.categories.first?.label == "face")
        #expect(detector.preprocessing.cropping == .letterbox)
        #expect(detector.preprocessing.normalization == .minusOneToOne)
    }

    @Test("A BGR description is honoured by the classifier: BGR on a photo equals RGB on the swapped photo")
    func classifierHonoursBGR() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let bgr = try ImageClassifier(modelPath: try Self.bgrCopy(of: Self.floatBundle, in: folder))
        let rgb = try ImageClassifier(modelPath: Fixtures.path(Self.floatBundle))
        #expect(bgr.preprocessing.channelOrder == .bgr)
        #expect(rgb.preprocessing.channelOrder == .rgb)
        let photo = try ImageDecoder.decode(contentsOf: Fixtures.path(Self.cat)).pixels
        let fromBGR = try bgr.classify(photo).categories
        let fromSwapped = try rgb.classify(try Self.swapped(photo)).categories
        #expect(fromBGR.map(\.index) == fromSwapped.map(\.index))
        #expect(Numerics.maxAbsoluteDifference(fromBGR.map(\.score), fromSwapped.map(\.score)) <= 1e-6)
        // And it changes the answer: the same photo in RGB scores differently.
        #expect(try rgb.classify(photo).categories.map(\.score) != fromBGR.map(\.score))
    }

    @Test("A BGR description is honoured by the detector too, and the caller's choice still wins")
    func detectorHonoursBGR() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = try Self.bgrCopy(of: Self.faceBundle, in: folder)
        let bgr = try ObjectDetector(modelPath: path)
        let rgb = try ObjectDetector(modelPath: Fixtures.path(Self.faceBundle))
        #expect(bgr.preprocessing.channelOrder == .bgr)
        let photo = try ImageDecoder.decode(contentsOf: Fixtures.path(Self.portrait)).pixels
        let fromBGR = try bgr.detect(photo).detections
        let fromSwapped = try rgb.detect(try Self.swapped(photo)).detections
        #expect(fromBGR.count == fromSwapped.count)
        #expect(Numerics.maxAbsoluteDifference(fromBGR.map(\.score), fromSwapped.map(\.score)) <= 1e-5)
        var options = ObjectDetector.Options()
        options.channelOrder = .rgb
        options.normalization = .zeroToOne
        let overridden = try ObjectDetector(modelPath: path, options: options)
        #expect(overridden.preprocessing.channelOrder == .rgb)
        #expect(overridden.preprocessing.normalization == .zeroToOne)
    }

    @Test("Description before metadata before task defaults: a bare float model gets the task's normalisation")
    func ruleOrder() throws {
        let bare = try LoadedModel(.path(Fixtures.path(Fixtures.MobileNet.float32)))
        #expect(bare.description == nil)
        #expect(bare.metadata == nil)
        #expect(bare.outputCount == 1)
        #expect(ImageTask.kind(of: bare) == .classification)
        #expect(try ImageClassifier(model: bare).preprocessing.normalization == .zeroToOne)
        // The same model as a detector would take [-1, 1] by default: each task has its own.
        let face = try LoadedModel(.path(Fixtures.path(Self.faceBundle)))
        #expect(face.outputCount == 2)
        #expect(ImageTask.kind(of: face) == .detection)
        let metadata = try LoadedModel(.path(Fixtures.path("Models/mobilenet_v2_1.0_224_uint8_metadata.tflite")))
        #expect(metadata.metadata != nil)
        #expect(try metadata.labels(forOutput: 0, classCount: 1000)?.count == 1000)
    }

    @Test("Labels the user gives win over the description's, and are checked against the classes")
    func givenLabelsWin() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let labels = try folder.write(Data("a\nb\n".utf8), named: "two.txt")
        let model = try LoadedModel(.path(Fixtures.path(Self.faceBundle)), labelsPath: labels)
        #expect(try model.labels(forOutput: nil)?.labels == ["a", "b"])
        let classifier = try LoadedModel(.path(Fixtures.path(Self.floatBundle)), labelsPath: labels)
        #expect(throws: NetRunnerError.labelCountMismatch(file: labels, labels: 2, classes: 1000)) {
            try ImageClassifier(model: classifier)
        }
    }

    @Test("An embedded-style bundle held in memory loads its labels from its assets")
    func bundleData() throws {
        let bundle = try ModelBundle(path: Fixtures.path(Self.faceBundle))
        let model = try LoadedModel(
            .bundleData(
                name: "in memory", modelData: try Data(contentsOf: URL(fileURLWithPath: try bundle.modelPath)),
                description: bundle.description, assets: ["labels.txt": Data("face\n".utf8)]))
        let detector = try ObjectDetector(model: model)
        #expect(
            try detector.detect(fileAt: Fixtures.path(Self.portrait)).detections.first?.categories.first?.label
                == "face")
        #expect(throws: ModelBundleError.missingFile(bundle: "in memory", file: "assets/labels.txt")) {
            try LoadedModel(
                .bundleData(
                    name: "in memory", modelData: model.modelData, description: bundle.description, assets: [:]))
        }
    }
}

@Suite("Zipped bundles are read in place")
struct ZippedLoadingTests {
    static func zippedFaceBundle(modelJSON: Data? = nil, corruptModel: Bool = false) throws -> Data {
        let bundle = Fixtures.path("Models/bundles/face_detection_short_range.tiobundle")
        let json = try modelJSON ?? Data(contentsOf: URL(fileURLWithPath: bundle + "/model.json"))
        let model = try Data(contentsOf: URL(fileURLWithPath: bundle + "/face_detection_short_range.tflite"))
        let labels = try Data(contentsOf: URL(fileURLWithPath: bundle + "/assets/labels.txt"))
        return ZipFixture.zip(
            [
                ("face.tiobundle/model.json", json), ("face.tiobundle/assets/labels.txt", labels),
                ("face.tiobundle/face_detection_short_range.tflite", model),
            ], corruptCRC: corruptModel)
    }

    @Test("A zipped bundle loads without unpacking, and its errors name the zip, not a temporary folder")
    func inPlace() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let good = try folder.write(try Self.zippedFaceBundle(), named: "face.zip")
        let detector = try ObjectDetector(modelPath: good)
        let photo = Fixtures.path("Tests/Fixtures/Photos/test/grace_hopper.jpg")
        #expect(try detector.detect(fileAt: photo).detections.first?.categories.first?.label == "face")
        let broken = try folder.write(
            try Self.zippedFaceBundle(modelJSON: Data("{\"name\": 3}".utf8)), named: "broken.zip")
        #expect {
            try LoadedModel(.path(broken))
        } throws: { error in
            "\(error)".contains("broken.zip:model.json") && !"\(error)".contains("netrunner-bundle-")
        }
    }

    @Test("A zipped bundle whose model does not match its CRC-32 is refused")
    func checksum() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let damaged = try folder.write(try Self.zippedFaceBundle(corruptModel: true), named: "damaged.zip")
        #expect {
            try LoadedModel(.path(damaged))
        } throws: { error in
            "\(error)".contains("damaged.zip") && "\(error)".contains("CRC-32")
        }
    }
}
