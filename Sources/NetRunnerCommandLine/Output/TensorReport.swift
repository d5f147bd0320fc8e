import TensorFlowLite

/// How `inspect` reports one tensor, in text and JSON.
struct TensorReport: Codable, Equatable {
    var index: Int
    var name: String
    var nameInSignature: String?
    var dtype: String
    var shape: [Int]
    var shapeSignature: [Int]
    var quantization: Quantization?

    struct Quantization: Codable, Equatable {
        var scale: [Float]
        var zeroPoint: [Int]
        var quantizedDimension: Int?
    }

    init(index: Int, tensor: Tensor, nameInSignature: String? = nil) {
        self.index = index
        self.name = tensor.name
        self.nameInSignature = nameInSignature
        self.dtype = tensor.dataType.description
        self.shape = tensor.shape.dimensions
        self.shapeSignature = tensor.shapeSignature.dimensions
        if let parameters = tensor.quantizationParameters {
            quantization = Quantization(scale: [parameters.scale], zeroPoint: [parameters.zeroPoint])
        } else if let parameters = tensor.perChannelQuantizationParameters {
            quantization = Quantization(
                scale: parameters.scales, zeroPoint: parameters.zeroPoints,
                quantizedDimension: parameters.quantizedDimension)
        }
    }

    /// One line: index, names, type, shape, quantization.
    var line: String {
        var text = "[\(index)] \"\(name)\""
        if let nameInSignature, nameInSignature != name { text += " (as \"\(nameInSignature)\")" }
        text += " \(dtype) \(Tensor.Shape(shape))"
        if shapeSignature != shape { text += " signature \(Tensor.Shape(shapeSignature))" }
        if let quantization {
            if let axis = quantization.quantizedDimension {
                text += " quantized per channel on axis \(axis) (\(quantization.scale.count) scales)"
            } else if let scale = quantization.scale.first, let zero = quantization.zeroPoint.first {
                text += " quantized scale \(scale) zero point \(zero)"
            }
        }
        return text
    }
}
