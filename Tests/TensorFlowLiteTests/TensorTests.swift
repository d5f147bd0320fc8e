import Foundation
import NetRunnerTestSupport
import Testing

@testable import TensorFlowLite

@Suite("Tensor, Tensor.Shape and Tensor.DataType")
struct TensorTests {
    // MARK: - Shape

    @Test("A shape made from an array, a list or a literal has the same rank and dimensions")
    func shapeInitializers() {
        let fromArray = Tensor.Shape([1, 224, 224, 3])
        let fromList = Tensor.Shape(1, 224, 224, 3)
        let fromLiteral: Tensor.Shape = [1, 224, 224, 3]
        for shape in [fromArray, fromList, fromLiteral] {
            #expect(shape.rank == 4)
            #expect(shape.dimensions == [1, 224, 224, 3])
        }
        #expect(fromArray == fromList)
        #expect(fromList == fromLiteral)
    }

    @Test("A scalar shape has rank 0 and one element")
    func scalarShape() {
        let scalar: Tensor.Shape = []
        #expect(scalar.rank == 0)
        #expect(scalar.dimensions.isEmpty)
        #expect(scalar.elementCount == 1)
        #expect(scalar.description == "[]")
        #expect(Tensor.Shape() == scalar)
    }

    @Test(
        "elementCount is the product of the dimensions",
        arguments: [
            ([1, 224, 224, 3], 150_528), ([2, 3], 6), ([7], 7), ([1, 1000], 1000), ([4, 0, 5], 0), ([3, 1, 1, 1], 3),
        ] as [([Int], Int)])
    func elementCount(dimensions: [Int], count: Int) {
        #expect(Tensor.Shape(dimensions).elementCount == count)
    }

    @Test("A dynamic dimension (-1) counts as no elements")
    func dynamicElementCount() {
        #expect(Tensor.Shape(-1, 4).elementCount == 0)
    }

    @Test("description lists the dimensions in brackets")
    func shapeDescription() {
        #expect(Tensor.Shape(1, 224, 224, 3).description == "[1, 224, 224, 3]")
        #expect(Tensor.Shape(-1, 4).description == "[-1, 4]")
        #expect(Tensor.Shape(5).description == "[5]")
        #expect("\(Tensor.Shape(2, 3))" == "[2, 3]")
    }

    @Test("Shapes compare and hash by their dimensions")
    func shapeEquatableHashable() {
        #expect(Tensor.Shape(2, 3) != Tensor.Shape(3, 2))
        #expect(Tensor.Shape(2, 3) != Tensor.Shape(2, 3, 1))
        let set: Set<Tensor.Shape> = [[2, 3], Tensor.Shape(2, 3), Tensor.Shape([2, 3]), [3, 2], []]
        #expect(set.count == 3)
    }

    // MARK: - DataType

    @Test(
        "Raw values are the TfLiteType numbers",
        arguments: [
            (Tensor.DataType.float32, 1), (.int32, 2), (.uInt8, 3), (.int64, 4), (.string, 5), (.bool, 6),
            (.int16, 7), (.complex64, 8), (.int8, 9), (.float16, 10), (.float64, 11), (.uInt64, 13),
            (.uInt32, 16), (.uInt16, 17), (.bFloat16, 19),
        ] as [(Tensor.DataType, Int)])
    func rawValues(type: Tensor.DataType, number: Int) {
        #expect(type.rawValue == number)
        #expect(Tensor.DataType(rawValue: number) == type)
    }

    @Test("Every case is listed once, with a distinct raw value")
    func allCases() {
        #expect(Tensor.DataType.allCases.count == 15)
        #expect(Set(Tensor.DataType.allCases.map(\.rawValue)).count == 15)
    }

    @Test("Type numbers without a case give nil: no type, complex128, resource, variant, int4")
    func unknownTypeNumbers() {
        for number in [0, 12, 14, 15, 18, 20, -1] {
            #expect(Tensor.DataType(rawValue: number) == nil, "\(number)")
            #expect(Tensor.DataType(elementType: Int32(number)) == nil, "\(number)")
        }
        #expect(Tensor.DataType(elementType: 9) == .int8)
    }

    @Test(
        "size is the bytes per element; strings have none",
        arguments: [
            (Tensor.DataType.bool, 1), (.uInt8, 1), (.int8, 1), (.int16, 2), (.uInt16, 2), (.float16, 2),
            (.bFloat16, 2), (.float32, 4), (.int32, 4), (.uInt32, 4), (.int64, 8), (.uInt64, 8), (.float64, 8),
            (.complex64, 8),
        ] as [(Tensor.DataType, Int)])
    func sizes(type: Tensor.DataType, size: Int) {
        #expect(type.size == size)
    }

    @Test("A string element has no fixed size")
    func stringSize() {
        #expect(Tensor.DataType.string.size == nil)
    }

    @Test(
        "description is the NumPy name",
        arguments: [
            (Tensor.DataType.float32, "float32"), (.int32, "int32"), (.uInt8, "uint8"), (.int64, "int64"),
            (.string, "string"), (.bool, "bool"), (.int16, "int16"), (.complex64, "complex64"), (.int8, "int8"),
            (.float16, "float16"), (.float64, "float64"), (.uInt64, "uint64"), (.uInt32, "uint32"),
            (.uInt16, "uint16"), (.bFloat16, "bfloat16"),
        ] as [(Tensor.DataType, String)])
    func descriptions(type: Tensor.DataType, name: String) {
        #expect(type.description == name)
        #expect("\(type)" == name)
    }

    // MARK: - Tensor

    @Test("A tensor read from a model has its name, type, shapes, bytes and quantization")
    func tensorFromModel() throws {
        let interpreter = try Interpreter(modelPath: Fixtures.path(Fixtures.MobileNet.uint8))
        try interpreter.allocateTensors()
        let input = try interpreter.input(at: 0)
        #expect(input.name == "serving_default_image:0")
        #expect(input.dataType == .uInt8)
        #expect(input.shape == [1, 224, 224, 3])
        #expect(input.shapeSignature == [1, 224, 224, 3])
        #expect(input.data.count == input.shape.elementCount * (input.dataType.size ?? 0))
        #expect(input.quantizationParameters == QuantizationParameters(scale: 0.003921568859368563, zeroPoint: 0))
        #expect(input.perChannelQuantizationParameters == nil)
    }

    @Test("The data of every input and output has shape.elementCount × size bytes")
    func byteCountsFollowShape() throws {
        for file in CorruptModels.smallModels where file != Fixtures.Synthetic.stringIO {
            let interpreter = try Interpreter(modelPath: Fixtures.path(file))
            try interpreter.allocateTensors()
            var tensors: [Tensor] = []
            for index in 0..<interpreter.inputTensorCount { tensors.append(try interpreter.input(at: index)) }
            for index in 0..<interpreter.outputTensorCount { tensors.append(try interpreter.output(at: index)) }
            for tensor in tensors {
                let size = try #require(tensor.dataType.size)
                #expect(tensor.data.count == tensor.shape.elementCount * size, "\(file) \(tensor.name)")
            }
        }
    }

    @Test("Tensors compare and hash by every field")
    func tensorEquatableHashable() {
        let base = Tensor(
            name: "t", dataType: .uInt8, shape: [2], data: Data([1, 2]),
            quantizationParameters: QuantizationParameters(scale: 0.5, zeroPoint: 1))
        let same = Tensor(
            name: "t", dataType: .uInt8, shape: [2], shapeSignature: [2], data: Data([1, 2]),
            quantizationParameters: QuantizationParameters(scale: 0.5, zeroPoint: 1))
        let variants = [
            Tensor(
                name: "u", dataType: .uInt8, shape: [2], data: Data([1, 2]),
                quantizationParameters: QuantizationParameters(scale: 0.5, zeroPoint: 1)),
            Tensor(
                name: "t", dataType: .int8, shape: [2], data: Data([1, 2]),
                quantizationParameters: QuantizationParameters(scale: 0.5, zeroPoint: 1)),
            Tensor(
                name: "t", dataType: .uInt8, shape: [1, 2], data: Data([1, 2]),
                quantizationParameters: QuantizationParameters(scale: 0.5, zeroPoint: 1)),
            Tensor(
                name: "t", dataType: .uInt8, shape: [2], shapeSignature: [-1], data: Data([1, 2]),
                quantizationParameters: QuantizationParameters(scale: 0.5, zeroPoint: 1)),
            Tensor(
                name: "t", dataType: .uInt8, shape: [2], data: Data([1, 3]),
                quantizationParameters: QuantizationParameters(scale: 0.5, zeroPoint: 1)),
            Tensor(name: "t", dataType: .uInt8, shape: [2], data: Data([1, 2])),
            Tensor(
                name: "t", dataType: .uInt8, shape: [2], data: Data([1, 2]),
                perChannelQuantizationParameters: PerChannelQuantizationParameters(
                    scales: [0.5], zeroPoints: [1], quantizedDimension: 0)),
        ]
        #expect(base == same)
        #expect(base.hashValue == same.hashValue)
        for variant in variants {
            #expect(variant != base)
        }
        #expect(Set(variants + [base, same]).count == variants.count + 1)
    }

    @Test("A tensor's shape signature defaults to its shape")
    func shapeSignatureDefault() {
        let tensor = Tensor(name: "t", dataType: .float32, shape: [1, 4], data: Data(count: 16))
        #expect(tensor.shapeSignature == tensor.shape)
    }
}
