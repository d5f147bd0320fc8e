import Foundation
import NetRunnerTestSupport
import TensorFlowLite
import Testing

@Suite("QuantizationParameters and PerChannelQuantizationParameters")
struct QuantizationParametersTests {
    @Test(
        "dequantize computes scale × (value − zeroPoint)",
        arguments: [
            (0.5, -3, 1, 2.0), (0.5, -3, -3, 0.0), (0.25, 0, 255, 63.75), (0.00390625, 0, 255, 0.99609375),
            (0.00390625, -128, -128, 0.0), (0.00390625, -128, 127, 0.99609375), (2, 10, 0, -20),
        ] as [(Float, Int, Int, Float)])
    func dequantize(scale: Float, zeroPoint: Int, value: Int, real: Float) {
        let parameters = QuantizationParameters(scale: scale, zeroPoint: zeroPoint)
        #expect(parameters.scale == scale)
        #expect(parameters.zeroPoint == zeroPoint)
        #expect(parameters.dequantize(value) == real)
    }

    @Test("dequantize matches the seed examples' scale * Float(Int(q) - zeroPoint) for every uint8")
    func dequantizeMatchesSeedFormula() {
        let parameters = QuantizationParameters(scale: 0.003921568859368563, zeroPoint: 7)
        for byte in UInt8.min...UInt8.max {
            #expect(parameters.dequantize(Int(byte)) == parameters.scale * Float(Int(byte) - parameters.zeroPoint))
        }
    }

    @Test("MobileNet int8 and uint8 read their per-tensor parameters from the model")
    func perTensorFromModels() throws {
        let int8 = try Interpreter(modelPath: Fixtures.path(Fixtures.MobileNet.int8))
        try int8.allocateTensors()
        #expect(try int8.input(at: 0).quantizationParameters == .init(scale: 0.003921568859368563, zeroPoint: -128))
        #expect(try int8.output(at: 0).quantizationParameters == .init(scale: 0.00390625, zeroPoint: -128))

        let uint8 = try Interpreter(modelPath: Fixtures.path(Fixtures.MobileNet.uint8))
        try uint8.allocateTensors()
        #expect(try uint8.output(at: 0).quantizationParameters == .init(scale: 0.00390625, zeroPoint: 0))

        let float32 = try Interpreter(modelPath: Fixtures.path(Fixtures.MobileNet.float32))
        try float32.allocateTensors()
        #expect(try float32.input(at: 0).quantizationParameters == nil)
        #expect(try float32.output(at: 0).quantizationParameters == nil)
    }

    @Test("per_channel_input.tflite's input has three channels along axis 3")
    func perChannelFromModel() throws {
        let interpreter = try Interpreter(modelPath: Fixtures.path(Fixtures.Synthetic.perChannelInput))
        try interpreter.allocateTensors()
        let input = try interpreter.input(at: 0)
        #expect(input.dataType == .int8)
        #expect(input.shape == [1, 2, 2, 3])
        #expect(input.quantizationParameters == nil)
        let parameters = try #require(input.perChannelQuantizationParameters)
        #expect(parameters.scales == [0.5, 0.25, 0.125])
        #expect(parameters.zeroPoints == [-3, 0, 5])
        #expect(parameters.quantizedDimension == 3)
        #expect(
            parameters
                == PerChannelQuantizationParameters(
                    scales: [0.5, 0.25, 0.125], zeroPoints: [-3, 0, 5], quantizedDimension: 3))
    }

    @Test("Per-channel parameters dequantize the input the way the model does (y = 1.5 × x)")
    func perChannelDequantization() throws {
        let interpreter = try Interpreter(modelPath: Fixtures.path(Fixtures.Synthetic.perChannelInput))
        try interpreter.allocateTensors()
        let parameters = try #require(try interpreter.input(at: 0).perChannelQuantizationParameters)
        let quantized: [Int8] = [-128, -3, 0, 1, 5, 127, 10, -10, 64, -64, 100, -100]
        try interpreter.copy(TensorBytes.data(quantized), toInputAt: 0)
        try interpreter.invoke()
        let output = try #require(TensorBytes.values(try interpreter.output(at: 0).data, as: Float.self))
        // Axis 3 is the innermost: element i belongs to channel i % 3.
        let expected = quantized.enumerated().map { index, value in
            let channel = index % 3
            return parameters.scales[channel] * Float(Int(value) - parameters.zeroPoints[channel]) * 1.5
        }
        #expect(output == expected)
    }

    @Test("Parameters compare and hash by every field")
    func equatableHashable() {
        let perTensor: Set<QuantizationParameters> = [
            .init(scale: 0.5, zeroPoint: 0), .init(scale: 0.5, zeroPoint: 0), .init(scale: 0.5, zeroPoint: 1),
            .init(scale: 0.25, zeroPoint: 0),
        ]
        #expect(perTensor.count == 3)
        let base = PerChannelQuantizationParameters(scales: [0.5, 0.25], zeroPoints: [0, 1], quantizedDimension: 0)
        let perChannel: Set<PerChannelQuantizationParameters> = [
            base,
            PerChannelQuantizationParameters(scales: [0.5, 0.25], zeroPoints: [0, 1], quantizedDimension: 0),
            PerChannelQuantizationParameters(scales: [0.5, 0.5], zeroPoints: [0, 1], quantizedDimension: 0),
            PerChannelQuantizationParameters(scales: [0.5, 0.25], zeroPoints: [0, 2], quantizedDimension: 0),
            PerChannelQuantizationParameters(scales: [0.5, 0.25], zeroPoints: [0, 1], quantizedDimension: 1),
        ]
        #expect(perChannel.count == 4)
    }
}
