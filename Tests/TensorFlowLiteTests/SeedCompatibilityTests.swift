import Foundation
import NetRunnerTestSupport
import TensorFlowLite
import Testing

// The image-classification `ModelDataHandler` of TensorFlow's iOS example, as the seed
// documents show it (shared/seeds/000, 002, 003), written against this module. Only the
// camera is gone: the handler takes the 224×224 RGB bytes `rgbDataFromBuffer` would make
// from a `CVPixelBuffer`. Everything else is the documents' API use, unchanged: the
// deprecated `InterpreterOptions`, `isErrorLoggingEnabled`, `input(at:)`'s `dataType`
// deciding between raw bytes and `Float(byte) / 255`, dequantization with
// `quantizationParameters`, and the `Data(copyingBufferOf:)` / `[Float32](unsafeData:)`
// extensions the example app defines.

/// An inference from invoking the `Interpreter`.
private struct Inference {
    let confidence: Float
    let label: String
}

/// The results of a run: the example's `Result`.
private struct Result {
    let inferenceTime: Double
    let inferences: [Inference]
}

extension Data {
    /// Creates a new buffer by copying the buffer pointer of the given array.
    ///
    /// - Warning: The given array's element type `T` must be trivial in that it can be copied bit
    ///   for bit with no indirection or reference-counting operations; otherwise, reinterpreting
    ///   data from the resulting buffer has undefined behavior.
    /// - Parameter array: An array with elements of type `T`.
    fileprivate init<T>(copyingBufferOf array: [T]) {
        self = array.withUnsafeBufferPointer(Data.init)
    }
}

extension Array {
    /// Creates a new array from the bytes of the given unsafe data.
    ///
    /// - Warning: The array's `Element` type must be trivial in that it can be copied bit for bit
    ///   with no indirection or reference-counting operations; otherwise, copying the raw bytes in
    ///   the `unsafeData`'s buffer to a new array returns an unsafe copy.
    /// - Note: Returns `nil` if `unsafeData.count` is not a multiple of
    ///   `MemoryLayout<Element>.stride`.
    /// - Parameter unsafeData: The data containing the bytes to turn into an array.
    fileprivate init?(unsafeData: Data) {
        guard unsafeData.count % MemoryLayout<Element>.stride == 0 else { return nil }
        self = unsafeData.withUnsafeBytes { .init($0.bindMemory(to: Element.self)) }
    }
}

/// Loads a model and its labels, and classifies 224×224 RGB images, the seeds' way.
@available(*, deprecated, message: "Written with InterpreterOptions, as the seed documents are.")
private struct ModelDataHandler {
    let threadCount: Int
    let resultCount = 3
    let threadCountLimit = 10

    let batchSize = 1
    let inputChannels = 3
    let inputWidth = 224
    let inputHeight = 224

    private var labels: [String] = []
    private var interpreter: Interpreter

    init?(modelPath: String, labelsPath: String, threadCount: Int = 1) {
        // Specify the options for the `Interpreter`.
        self.threadCount = threadCount
        var options = InterpreterOptions()
        options.threadCount = threadCount
        options.isErrorLoggingEnabled = true
        do {
            // Create the `Interpreter`.
            interpreter = try Interpreter(modelPath: modelPath, options: options)
        } catch {
            return nil
        }
        // Load the classes listed in the labels file.
        guard let contents = try? String(contentsOfFile: labelsPath, encoding: .utf8) else { return nil }
        labels = contents.components(separatedBy: .newlines).filter { !$0.isEmpty }.map {
            String($0.split(separator: ",").first ?? "")
        }
    }

    func runModel(onRGB rgbBytes: [UInt8]) -> Result? {
        let interval: TimeInterval
        let outputTensor: Tensor
        do {
            // Allocate memory for the model's input `Tensor`s.
            try interpreter.allocateTensors()
            let inputTensor = try interpreter.input(at: 0)

            guard
                let rgbData = rgbData(
                    rgbBytes,
                    byteCount: batchSize * inputWidth * inputHeight * inputChannels,
                    isModelQuantized: inputTensor.dataType == .uInt8
                )
            else {
                return nil
            }

            // Copy the RGB data to the input `Tensor`.
            try interpreter.copy(rgbData, toInputAt: 0)

            // Run inference by invoking the `Interpreter`.
            let startDate = Date()
            try interpreter.invoke()
            interval = Date().timeIntervalSince(startDate) * 1000

            // Get the output `Tensor` to process the inference results.
            outputTensor = try interpreter.output(at: 0)
        } catch {
            return nil
        }

        let results: [Float]
        switch outputTensor.dataType {
        case .uInt8:
            guard let quantization = outputTensor.quantizationParameters else {
                return nil
            }
            let quantizedResults = [UInt8](outputTensor.data)
            results = quantizedResults.map {
                quantization.scale * Float(Int($0) - quantization.zeroPoint)
            }
        case .float32:
            results = [Float32](unsafeData: outputTensor.data) ?? []
        default:
            return nil
        }

        // Process the results.
        let topNInferences = getTopN(results: results)

        // Return the inference time and inference results.
        return Result(inferenceTime: interval, inferences: topNInferences)
    }

    /// Returns the top N inference results sorted in descending order.
    private func getTopN(results: [Float]) -> [Inference] {
        // Create a zipped array of tuples [(labelIndex: Int, confidence: Float)].
        let zippedResults = zip(labels.indices, results)

        // Sort the zipped results by confidence value in descending order.
        let sortedResults = zippedResults.sorted { $0.1 > $1.1 }.prefix(resultCount)

        // Return the `Inference` results.
        return sortedResults.map { result in Inference(confidence: result.1, label: labels[result.0]) }
    }

    /// The example's `rgbDataFromBuffer` after it has dropped the alpha bytes.
    private func rgbData(_ rgbBytes: [UInt8], byteCount: Int, isModelQuantized: Bool) -> Data? {
        guard rgbBytes.count == byteCount else { return nil }
        if isModelQuantized { return Data(rgbBytes) }
        return Data(copyingBufferOf: rgbBytes.map { Float($0) / 255.0 })
    }
}

@Suite("Seed documents' ModelDataHandler runs unchanged")
struct SeedCompatibilityTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var model: String
        var image: String
        var topLabel: String
        var testDescription: String { "\((model as NSString).lastPathComponent) on \(image)" }
    }

    static let cases = [
        Case(model: Fixtures.MobileNet.float32, image: "chelsea", topLabel: "Egyptian cat"),
        Case(model: Fixtures.MobileNet.float32, image: "coffee", topLabel: "espresso"),
        Case(model: Fixtures.MobileNet.uint8, image: "chelsea", topLabel: "Egyptian cat"),
        Case(model: Fixtures.MobileNet.uint8, image: "coffee", topLabel: "espresso"),
    ]

    /// The reference input of the uint8 model is the photo's raw 224×224 RGB bytes.
    static func rgbBytes(_ image: String) throws -> [UInt8] {
        [UInt8](try Fixtures.data("Tests/Fixtures/Reference/mobilenet_v2_1.0_224_uint8__\(image)__in0.bin"))
    }

    @Test("The top label is the reference's, with the reference's score", arguments: cases)
    @available(*, deprecated)
    func classifies(testCase: Case) throws {
        let handler = try #require(
            ModelDataHandler(
                modelPath: Fixtures.path(testCase.model), labelsPath: Fixtures.path(Fixtures.MobileNet.labels),
                threadCount: 2))
        let rgb = try Self.rgbBytes(testCase.image)
        #expect(rgb.count == 224 * 224 * 3)
        let result = try #require(handler.runModel(onRGB: rgb))
        #expect(result.inferences.count == handler.resultCount)
        let top = try #require(result.inferences.first)
        #expect(top.label == testCase.topLabel)
        #expect(result.inferences.map(\.confidence) == result.inferences.map(\.confidence).sorted(by: >))

        let reference = try Fixtures.reference()
        let model = try #require(reference.models.first { $0.file == testCase.model })
        let recorded = try #require(model.cases.first { $0.name == testCase.image && $0.threads == 1 })
        let top5 = try #require(recorded.top5)
        #expect(top.confidence == Float(top5[0][1]))
    }

    @Test("The labels file has 1000 classes and the handler reads its first names")
    func labels() throws {
        let contents = try String(contentsOfFile: Fixtures.path(Fixtures.MobileNet.labels), encoding: .utf8)
        let lines = contents.components(separatedBy: .newlines).filter { !$0.isEmpty }
        #expect(lines.count == 1000)
        #expect(lines[285].split(separator: ",").first == "Egyptian cat")
        #expect(lines[967].split(separator: ",").first == "espresso")
    }

    @Test("The seeds' Data and Array extensions round-trip floats")
    func extensionsRoundTrip() throws {
        let values: [Float32] = [0, 1, -2.5, .pi, 1e-7]
        let data = Data(copyingBufferOf: values)
        #expect(data.count == 20)
        #expect([Float32](unsafeData: data) == values)
        #expect([Float32](unsafeData: data.prefix(7)) == nil)
    }
}
