import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import TensorFlowLite
import Testing

@testable import NetRunner

/// The classifier on the committed real photos, against the Python reference (Pillow centre
/// crop + bilinear resize, `ai_edge_litert`), recorded in Tests/Fixtures/Reference.
@Suite("Image classification on real photos")
struct ImageClassifierTests {
    static let photos: [(name: String, file: String, label: String)] = [
        ("chelsea", "Tests/Fixtures/Photos/test/chelsea.png", "Egyptian cat"),
        ("coffee", "Tests/Fixtures/Photos/test/coffee.jpg", "espresso"),
        ("eagle", "Tests/Fixtures/Photos/test/eagle.jpg", "bald eagle"),
        ("grace_hopper", "Tests/Fixtures/Photos/test/grace_hopper.jpg", "military uniform"),
    ]
    static let models = [Fixtures.MobileNet.float32, Fixtures.MobileNet.uint8, Fixtures.MobileNet.int8]

    func classifier(_ model: String, _ configure: (inout ImageClassifier.Options) -> Void = { _ in }) throws
        -> ImageClassifier
    {
        var options = ImageClassifier.Options()
        configure(&options)
        return try ImageClassifier(
            modelPath: Fixtures.path(model), labelsPath: Fixtures.path(Fixtures.MobileNet.labels), options: options)
    }

    func referenceTop5(model: String, photo: String) throws -> [Int] {
        let reference = try Fixtures.reference()
        let entry = try #require(reference.models.first { $0.file == model })
        let testCase = try #require(entry.cases.first { $0.name == photo && $0.threads == 1 })
        return try #require(testCase.top5).map { Int($0[0]) }
    }

    @Test("Every photo gets its expected label from every model, through the whole pipeline", arguments: models)
    func expectedLabels(model: String) throws {
        let classifier = try classifier(model)
        for photo in Self.photos {
            let result = try classifier.classify(fileAt: Fixtures.path(photo.file))
            // At most 5, none scoring 0 (a uint8 model pads its top 5 with exact zeros).
            #expect((1...5).contains(result.categories.count) && result.categories.allSatisfy { $0.score > 0 })
            #expect(result.categories.first?.displayName == photo.label, "\(model) \(photo.name)")
            #expect(result.categories.first?.index == (try referenceTop5(model: model, photo: photo.name)).first)
            #expect(result.inferenceMilliseconds > 0 && result.preprocessingMilliseconds > 0)
            #expect(zip(result.categories, result.categories.dropFirst()).allSatisfy { $0.score >= $1.score })
        }
    }

    @Test("The float model's top 5 equals the Python reference's, at full decoding resolution")
    func top5MatchesReference() throws {
        let classifier = try classifier(Fixtures.MobileNet.float32)
        for photo in Self.photos {
            let image = try ImageDecoder.decode(contentsOf: Fixtures.path(photo.file))
            let result = try classifier.run(image)
            #expect(
                result.categories.map(\.index)
                    == (try referenceTop5(model: Fixtures.MobileNet.float32, photo: photo.name)), "\(photo.name)")
        }
    }

    @Test("Our input tensor matches Pillow's centre crop and bilinear resize within 2 per channel", arguments: models)
    func tensorMatchesPillow(model: String) throws {
        let classifier = try classifier(model)
        let tensorizer = try ImageTensorizer(preprocessing: classifier.preprocessing)
        let stem = (model as NSString).lastPathComponent.replacingOccurrences(of: ".tflite", with: "")
        for photo in Self.photos {
            let image = try ImageDecoder.decode(contentsOf: Fixtures.path(photo.file))
            try tensorizer.prepare(image)
            let expected = try Fixtures.data("Tests/Fixtures/Reference/\(stem)__\(photo.name)__in0.bin")
            #expect(tensorizer.input.count == expected.count)
            switch classifier.preprocessing.tensorType {
            case .float32:
                let ours = Numerics.floats(tensorizer.input)
                let theirs = Numerics.floats(expected)
                #expect(Numerics.maxAbsoluteDifference(ours, theirs) <= 2.0 / 255 + 1e-6, "\(photo.name)")
            default:
                let differences = zip(tensorizer.input, expected).map {
                    abs(Int(Int8(bitPattern: $0)) - Int(Int8(bitPattern: $1)))
                }
                let unsignedDifferences = zip(tensorizer.input, expected).map { abs(Int($0) - Int($1)) }
                let worst = classifier.preprocessing.tensorType == .int8 ? differences.max() : unsignedDifferences.max()
                #expect((worst ?? 99) <= 2, "\(photo.name)")
                let exact = zip(tensorizer.input, expected).filter { $0 == $1 }.count
                #expect(
                    Double(exact) / Double(expected.count) >= 0.99, "\(photo.name): \(exact) of \(expected.count) equal"
                )
            }
        }
    }

    @Test("maxResults, scoreThreshold, allowlist and denylist filter the categories")
    func filters() throws {
        let file = Fixtures.path("Tests/Fixtures/Photos/test/chelsea.png")
        let top1 = try classifier(Fixtures.MobileNet.float32) { $0.maxResults = 1 }.classify(fileAt: file)
        #expect(top1.categories.map(\.displayName) == ["Egyptian cat"])
        let confident = try classifier(Fixtures.MobileNet.float32) { $0.scoreThreshold = 0.1 }.classify(fileAt: file)
        #expect(confident.categories.allSatisfy { $0.score >= 0.1 })
        #expect(confident.categories.count == 2)
        let allowed = try classifier(Fixtures.MobileNet.float32) {
            $0.categoryAllowlist = ["tabby", "lynx, catamount"]
        }
        .classify(fileAt: file)
        #expect(allowed.categories.map(\.index) == [281, 287])
        let denied = try classifier(Fixtures.MobileNet.float32) { $0.categoryDenylist = ["Egyptian cat"] }.classify(
            fileAt: file)
        #expect(denied.categories.first?.displayName == "tiger cat")
        #expect(!denied.categories.contains { $0.index == 285 })
    }

    @Test("By default no category scoring 0; scoreThreshold 0 gives Python's top 5, zeros included")
    func zeroScores() throws {
        let file = Fixtures.path("Tests/Fixtures/Photos/test/chelsea.png")
        // The uint8 MobileNetV2's 5th category for the cat is "tench", scoring exactly 0.
        let plain = try classifier(Fixtures.MobileNet.uint8).classify(fileAt: file)
        #expect(plain.categories.count == 4 && plain.categories.allSatisfy { $0.score > 0 }, "\(plain.categories)")
        #expect(!plain.categories.contains { $0.displayName == "tench" })
        let python = try classifier(Fixtures.MobileNet.uint8) { $0.scoreThreshold = 0 }.classify(fileAt: file)
        #expect(
            python.categories.map(\.index) == (try referenceTop5(model: Fixtures.MobileNet.uint8, photo: "chelsea")))
        #expect(python.categories.last?.displayName == "tench" && python.categories.last?.score == 0)
        #expect(plain.categories == Array(python.categories.prefix(4)))
        // The same through ImageTask's options, the default and the result options' 0.
        let model = try LoadedModel(
            .path(Fixtures.path(Fixtures.MobileNet.uint8)), labelsPath: Fixtures.path(Fixtures.MobileNet.labels))
        let count = { (options: ImageTask.Options) throws -> Int? in
            guard case .classification(let result) = try ImageTask(model: model, options: options).run(fileAt: file)
            else { return nil }
            return result.categories.count
        }
        var options = ImageTask.Options()
        #expect(try count(options) == 4)
        options.results = ResultOptions(scoreThreshold: 0)
        #expect(try count(options) == 5)
    }

    @Test("Bad options, labels and models are clear errors")
    func errors() throws {
        #expect(throws: NetRunnerError.invalidOption(name: "maxResults", reason: "must be 1 or more, found 0")) {
            try classifier(Fixtures.MobileNet.uint8) { $0.maxResults = 0 }
        }
        #expect(
            throws: NetRunnerError.invalidOption(
                name: "categoryAllowlist", reason: "an allowlist and a denylist cannot be used together")
        ) {
            try classifier(Fixtures.MobileNet.uint8) {
                $0.categoryAllowlist = ["tabby"]
                $0.categoryDenylist = ["lynx"]
            }
        }
        // A name that is no label is an error with the closest label, not a silent empty answer.
        #expect(
            throws: NetRunnerError.invalidOption(
                name: "categoryAllowlist",
                reason: "\"tabby kat\" is not one of the model's 1000 labels (closest: \"tabby\")")
        ) {
            try classifier(Fixtures.MobileNet.uint8) { $0.categoryAllowlist = ["tabby", "tabby kat"] }
        }
        // A word of several labels suggests the labels holding it, not the nearest spelling ("cab").
        #expect(
            throws: NetRunnerError.invalidOption(
                name: "categoryAllowlist",
                reason: "\"cat\" is not one of the model's 1000 labels (closest: \"tabby\", \"tiger cat\", "
                    + "\"Persian cat\", \"Siamese cat\", \"Egyptian cat\")")
        ) {
            try classifier(Fixtures.MobileNet.uint8) { $0.categoryAllowlist = ["cat"] }
        }
        #expect(
            throws: NetRunnerError.invalidOption(
                name: "categoryDenylist", reason: "\"not a label\" is not one of the model's 1000 labels")
        ) {
            try classifier(Fixtures.MobileNet.uint8) { $0.categoryDenylist = ["not a label"] }
        }
        let faceLabels = Fixtures.path("Models/face_labels.txt")
        #expect(throws: NetRunnerError.labelCountMismatch(file: faceLabels, labels: 1, classes: 1000)) {
            try ImageClassifier(modelPath: Fixtures.path(Fixtures.MobileNet.uint8), labelsPath: faceLabels)
        }
        #expect {
            try ImageClassifier(modelPath: Fixtures.path(Fixtures.Synthetic.multiIO))
        } throws: { error in
            guard case NetRunnerError.notAnImageModel(_, let reason) = error else { return false }
            return reason.contains("[1, 3]")
        }
        #expect(throws: ImageError.self) {
            try classifier(Fixtures.MobileNet.uint8).classify(fileAt: "/nonexistent/photo.jpg")
        }
    }

    @Test("Classifying pixels directly (a BGRA camera frame) gives the file's answer")
    func pixels() throws {
        let classifier = try classifier(Fixtures.MobileNet.uint8)
        let image = try ImageDecoder.decode(contentsOf: Fixtures.path("Tests/Fixtures/Photos/test/chelsea.png"))
        let frame = image.pixels.converted(to: .bgra32)
        let fromFrame = try classifier.classify(frame)
        let fromFile = try classifier.run(image)
        #expect(fromFrame.categories.map(\.index) == fromFile.categories.map(\.index))
        #expect(fromFrame.decodingMilliseconds == 0)
    }

    @Test("Encoded bytes in memory classify like the file")
    func data() throws {
        let classifier = try classifier(Fixtures.MobileNet.uint8)
        let path = Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")
        let fromData = try classifier.classify(data: try Data(contentsOf: URL(fileURLWithPath: path)))
        let fromFile = try classifier.classify(fileAt: path)
        #expect(fromData.categories == fromFile.categories)
    }
}
