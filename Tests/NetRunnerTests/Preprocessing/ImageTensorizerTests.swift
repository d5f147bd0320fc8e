import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import TensorFlowLite
import Testing

@testable import NetRunner

/// Image to tensor for every input type: checked pixel by pixel on a small synthetic image
/// whose colours are known, so channel order, normalisation and quantization are visible.
@Suite("Image to tensor")
struct ImageTensorizerTests {
    /// A 2x1 RGB image: one pure red pixel, one (10, 20, 30) pixel.
    func image() throws -> PixelBuffer {
        try PixelBuffer(width: 2, height: 1, format: .rgb24, bytes: [255, 0, 0, 10, 20, 30])
    }

    func preprocessing(
        _ type: Tensor.DataType, quantization: QuantizationParameters? = nil,
        normalization: ImagePreprocessing.Normalization? = nil, order: ImagePreprocessing.ChannelOrder = .rgb
    ) -> ImagePreprocessing {
        ImagePreprocessing(
            inputIndex: 0, size: PixelSize(width: 2, height: 1), channels: 3, tensorType: type,
            quantization: quantization, normalization: normalization ?? (type == .uInt8 ? nil : .zeroToOne),
            channelOrder: order, cropping: .stretch, resizeMethod: .bilinear)
    }

    @Test("uint8 inputs get the raw bytes, in RGB or BGR order")
    func uint8() throws {
        let rgb = try ImageTensorizer(preprocessing: preprocessing(.uInt8))
        try rgb.prepare(try image())
        #expect([UInt8](rgb.input) == [255, 0, 0, 10, 20, 30])
        let bgr = try ImageTensorizer(preprocessing: preprocessing(.uInt8, order: .bgr))
        try bgr.prepare(try image())
        #expect([UInt8](bgr.input) == [0, 0, 255, 30, 20, 10])
    }

    @Test("float inputs are normalised: [0, 1], [-1, 1], and per-channel mean and std")
    func float() throws {
        let unit = try ImageTensorizer(preprocessing: preprocessing(.float32))
        try unit.prepare(try image())
        let expectedUnit: [Float] = [1, 0, 0, 10 / 255, 20 / 255, 30 / 255]
        #expect(Numerics.floats(unit.input) == expectedUnit)
        let symmetric = try ImageTensorizer(preprocessing: preprocessing(.float32, normalization: .minusOneToOne))
        try symmetric.prepare(try image())
        let expectedSymmetric: [Float] = [1, -1, -1, (10 - 127.5) / 127.5, (20 - 127.5) / 127.5, (30 - 127.5) / 127.5]
        #expect(Numerics.floats(symmetric.input) == expectedSymmetric)
        let imagenet = ImagePreprocessing.Normalization(mean: [123.675, 116.28, 103.53], std: [58.395, 57.12, 57.375])
        let perChannel = try ImageTensorizer(
            preprocessing: preprocessing(.float32, normalization: imagenet, order: .bgr))
        try perChannel.prepare(try image())
        // BGR order: the tensor's first channel is blue, normalised with blue's mean and std.
        let expected: [Float] = [
            (0 - 103.53) / 57.375, (0 - 116.28) / 57.12, (255 - 123.675) / 58.395,
            (30 - 103.53) / 57.375, (20 - 116.28) / 57.12, (10 - 123.675) / 58.395,
        ]
        #expect(Numerics.maxAbsoluteDifference(Numerics.floats(perChannel.input), expected) < 1e-6)
    }

    @Test("int8 inputs are quantized with the tensor's scale and zero point")
    func int8() throws {
        let quantization = QuantizationParameters(scale: 1 / 255, zeroPoint: -128)
        let tensorizer = try ImageTensorizer(preprocessing: preprocessing(.int8, quantization: quantization))
        try tensorizer.prepare(try image())
        #expect(tensorizer.input.map { Int8(bitPattern: $0) } == [127, -128, -128, -118, -108, -98])
        // A [-1, 1] model quantized with scale 1/128 and zero point 0 saturates at 1.0.
        let symmetric = try ImageTensorizer(
            preprocessing: preprocessing(
                .int8, quantization: QuantizationParameters(scale: 1 / 128, zeroPoint: 0),
                normalization: .minusOneToOne))
        try symmetric.prepare(try image())
        #expect(symmetric.input.map { Int8(bitPattern: $0) } == [127, -128, -128, -118, -108, -98])
    }

    @Test("A zero standard deviation is refused")
    func badNormalization() {
        #expect(throws: NetRunnerError.self) {
            try ImageTensorizer(
                preprocessing: preprocessing(.float32, normalization: .init(mean: [0], std: [0])))
        }
    }

    @Test("Preparing again reuses the input buffer: no copy once the caller let go of it")
    func reuse() throws {
        let tensorizer = try ImageTensorizer(preprocessing: preprocessing(.float32))
        try tensorizer.prepare(try image())
        let first = tensorizer.input.withUnsafeBytes { $0.baseAddress }
        try tensorizer.prepare(try image())
        let second = tensorizer.input.withUnsafeBytes { $0.baseAddress }
        #expect(first == second)
    }

    @Test("Letterboxing pads with black and maps boxes back to the image")
    func letterbox() throws {
        var setup = preprocessing(.uInt8)
        setup.size = PixelSize(width: 4, height: 4)
        setup.cropping = .letterbox
        let tensorizer = try ImageTensorizer(preprocessing: setup)
        // A 4x2 white image lands in rows 1-2 of the 4x4 input.
        let white = try PixelBuffer(width: 4, height: 2, format: .rgb24, bytes: [UInt8](repeating: 255, count: 24))
        let transform = try tensorizer.prepare(white)
        let rows = stride(from: 0, to: 48, by: 12).map { Array(tensorizer.input[$0..<($0 + 12)]) }
        #expect(rows[0].allSatisfy { $0 == 0 } && rows[3].allSatisfy { $0 == 0 })
        #expect(rows[1].allSatisfy { $0 == 255 } && rows[2].allSatisfy { $0 == 255 })
        let box = transform.box(minX: 0, minY: 0.25, maxX: 1, maxY: 0.75)
        #expect(box == BoundingBox(minX: 0, minY: 0, maxX: 4, maxY: 2))
    }

    @Test(
        "The input tensor turns back into the picture the model saw, whatever its type, order and normalisation",
        arguments: [
            (Tensor.DataType.uInt8, nil, ImagePreprocessing.ChannelOrder.rgb),
            (.uInt8, nil, .bgr),
            (.float32, ImagePreprocessing.Normalization.zeroToOne, .rgb),
            (.float32, .minusOneToOne, .bgr),
            (
                .float32,
                ImagePreprocessing.Normalization(mean: [123.675, 116.28, 103.53], std: [58.395, 57.12, 57.375]), .rgb
            ),
            (.int8, .minusOneToOne, .rgb),
        ] as [(Tensor.DataType, ImagePreprocessing.Normalization?, ImagePreprocessing.ChannelOrder)])
    func inputImage(
        type: Tensor.DataType, normalization: ImagePreprocessing.Normalization?, order: ImagePreprocessing.ChannelOrder
    )
        throws
    {
        let quantization = type == .int8 ? QuantizationParameters(scale: 1 / 128, zeroPoint: 0) : nil
        let tensorizer = try ImageTensorizer(
            preprocessing: preprocessing(type, quantization: quantization, normalization: normalization, order: order))
        let source = try PixelBuffer(width: 2, height: 1, format: .rgb24, bytes: [255, 0, 0, 10, 20, 30])
        try tensorizer.prepare(source)
        let seen = try tensorizer.image(fromInput: tensorizer.input)
        #expect(seen.size == PixelSize(width: 2, height: 1))
        // int8 at scale 1/128 keeps every other level: within 1 of the original.
        let tolerance = type == .int8 ? 1 : 0
        for (found, expected) in zip(seen.packedBytes, source.packedBytes) {
            #expect(abs(Int(found) - Int(expected)) <= tolerance, "\(type) \(order): \(seen.packedBytes)")
        }
        #expect(throws: ImageError.bufferTooSmall(provided: 1, required: tensorizer.input.count)) {
            try tensorizer.image(fromInput: Data([0]))
        }
    }
}
