import Foundation
import NetRunnerTestSupport
import Testing

@testable import TensorFlowLite

/// Every model and recorded case of the Python reference, run through our `Interpreter`
/// and `SignatureRunner`: metadata must match exactly, and outputs bit for bit (the
/// reference ran the same runtime with XNNPACK; agreement was measured bit-exact).
@Suite("Outputs and metadata equal Python ai_edge_litert's")
struct ReferenceTests {
    static let reference: Reference? = try? Fixtures.reference()
    static var models: [Reference.Model] { reference?.models ?? [] }

    @Test("The reference file is present and covers the real and synthetic models")
    func referenceIsPresent() throws {
        let reference = try #require(Self.reference)
        #expect(reference.aiEdgeLitert == Runtime.version)
        let files = Set(reference.models.map(\.file))
        #expect(files.contains(Fixtures.MobileNet.float32))
        #expect(files.contains(Fixtures.MobileNet.uint8))
        #expect(files.contains(Fixtures.MobileNet.int8))
        #expect(reference.models.count >= 8)
    }

    @Test("Model files are the ones the reference was recorded from", arguments: models)
    func modelFilesMatch(model: Reference.Model) throws {
        let data = try Fixtures.data(model.file)
        #expect(data.count == model.bytes)
    }

    @Test("Input and output details match get_input_details / get_output_details", arguments: models)
    func detailsMatch(model: Reference.Model) throws {
        let interpreter = try Interpreter(modelPath: Fixtures.path(model.file))
        #expect(interpreter.inputTensorCount == model.inputs.count)
        #expect(interpreter.outputTensorCount == model.outputs.count)
        #expect(interpreter.signatureKeys == model.signatures.map(\.key))
        if model.inputs.contains(where: { $0.dtype == "string" }) {
            // String tensors have no fixed byte size: allocation must refuse them clearly.
            #expect(throws: InterpreterError.invalidTensorDataType) { try interpreter.allocateTensors() }
            return
        }
        try interpreter.allocateTensors()
        for (index, expected) in model.inputs.enumerated() {
            try expectDetails(try interpreter.input(at: index), expected)
        }
        for (index, expected) in model.outputs.enumerated() {
            try expectDetails(try interpreter.output(at: index), expected)
        }
        for signature in model.signatures {
            let runner = try interpreter.signatureRunner(with: signature.key)
            #expect(Set(runner.inputs) == Set(signature.inputs))
            #expect(Set(runner.outputs) == Set(signature.outputs))
            for details in signature.inputDetails ?? [] {
                try expectDetails(try runner.input(named: try #require(details.signatureName)), details)
            }
            for details in signature.outputDetails ?? [] {
                try expectDetails(try runner.output(named: try #require(details.signatureName)), details)
            }
        }
    }

    @Test("Outputs equal the reference bit for bit", arguments: models)
    func outputsMatch(model: Reference.Model) throws {
        // String tensors are refused at allocation (see detailsMatch).
        for testCase in model.cases where !model.inputs.contains(where: { $0.dtype == "string" }) {
            var options = Interpreter.Options()
            options.threadCount = testCase.threads
            let interpreter = try Interpreter(modelPath: Fixtures.path(model.file), options: options)
            if let key = testCase.signature {
                let runner = try interpreter.signatureRunner(with: key)
                var inputs: [String: Data] = [:]
                for (name, file) in testCase.inputs.named { inputs[name] = try Fixtures.data(file) }
                try runner.invoke(with: inputs)
                for (name, file) in testCase.outputs.named {
                    let output = try runner.output(named: name)
                    #expect(output.data == (try Fixtures.data(file)), "\(model.file) \(testCase.name) \(key).\(name)")
                }
                continue
            }
            for (index, shape) in testCase.resize ?? [:] {
                try interpreter.resizeInput(at: try #require(Int(index)), to: Tensor.Shape(shape))
            }
            try interpreter.allocateTensors()
            for (index, file) in testCase.inputs.ordered.enumerated() {
                try interpreter.copy(try Fixtures.data(file), toInputAt: index)
            }
            try interpreter.invoke()
            for (index, file) in testCase.outputs.ordered.enumerated() {
                let output = try interpreter.output(at: index)
                let expected = try Fixtures.data(file)
                #expect(
                    output.data == expected,
                    "\(model.file) \(testCase.name) threads \(testCase.threads) output \(index)")
            }
            if let top5 = testCase.top5 {
                let output = try interpreter.output(at: 0)
                let scores: [Float] =
                    output.dataType == .float32
                    ? Numerics.floats(output.data)
                    : Self.dequantized(output)
                // Quantized scores tie; compare the scores at the reference's indices, and
                // the top-1 index, rather than an order among equals.
                for pair in top5 {
                    #expect(
                        scores[Int(pair[0])] == Float(pair[1]), "\(model.file) \(testCase.name) class \(Int(pair[0]))")
                }
                #expect(Numerics.topK(scores, 1) == [Int(top5[0][0])])
            }
        }
    }

    static func dequantized(_ tensor: Tensor) -> [Float] {
        guard let parameters = tensor.quantizationParameters else { return [] }
        switch tensor.dataType {
        case .uInt8: return tensor.data.map { parameters.dequantize(Int($0)) }
        case .int8: return tensor.data.map { parameters.dequantize(Int(Int8(bitPattern: $0))) }
        default: return []
        }
    }

    private func expectDetails(_ tensor: Tensor, _ expected: Reference.TensorDetails) throws {
        #expect(tensor.name == expected.name)
        #expect(tensor.dataType.description == expected.dtype)
        #expect(tensor.shape.dimensions == expected.shape, "\(expected.name)")
        #expect(tensor.shapeSignature.dimensions == expected.shapeSignature, "\(expected.name)")
        if let quantization = expected.quantization {
            let parameters = try #require(tensor.quantizationParameters, "\(expected.name) should be quantized")
            #expect(parameters.scale == Float(quantization.scale))
            #expect(parameters.zeroPoint == quantization.zeroPoint)
        } else if expected.perChannel == nil {
            #expect(tensor.quantizationParameters == nil)
        }
        if let perChannel = expected.perChannel {
            let parameters = try #require(tensor.perChannelQuantizationParameters)
            #expect(parameters.scales == perChannel.scales.map { Float($0) })
            #expect(parameters.zeroPoints == perChannel.zeroPoints)
            #expect(parameters.quantizedDimension == perChannel.quantizedDimension)
            #expect(tensor.quantizationParameters == nil)
        } else {
            #expect(tensor.perChannelQuantizationParameters == nil)
        }
    }
}
