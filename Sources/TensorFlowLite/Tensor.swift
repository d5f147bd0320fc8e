public import FoundationEssentials

/// An input or output tensor of a TensorFlow Lite model: its name, element type, shape,
/// a copy of its bytes, and how its values are quantized.
///
/// `Tensor` is a value: ``data`` is a copy taken when the tensor was read from the
/// ``Interpreter``, so later invocations do not change it.
public struct Tensor: Equatable, Hashable, Sendable {
    /// The name of the tensor in the model.
    public let name: String

    /// The data type of the tensor's elements.
    public let dataType: DataType

    /// The tensor's current shape.
    public let shape: Shape

    /// The shape the model declares, with -1 for each dynamic dimension (for example a
    /// batch dimension that ``Interpreter/resizeInput(at:to:)`` may change).
    public let shapeSignature: Shape

    /// The tensor's bytes, in row-major order, little-endian.
    public let data: Data

    /// How quantized values map to real values, for per-tensor quantized tensors.
    ///
    /// `nil` when the tensor is not quantized, or when it is quantized per channel
    /// (see ``perChannelQuantizationParameters``). As in TensorFlowLiteSwift, a scale of
    /// zero means "not quantized".
    public let quantizationParameters: QuantizationParameters?

    /// How quantized values map to real values, for per-channel (per-axis) quantized
    /// tensors; `nil` otherwise.
    public let perChannelQuantizationParameters: PerChannelQuantizationParameters?

    /// Creates a tensor.
    ///
    /// - Parameters:
    ///   - name: The tensor's name in the model.
    ///   - dataType: The element type.
    ///   - shape: The current shape.
    ///   - shapeSignature: The declared shape, -1 for dynamic dimensions.
    ///   - data: The bytes.
    ///   - quantizationParameters: Per-tensor quantization, if any.
    ///   - perChannelQuantizationParameters: Per-channel quantization, if any.
    init(
        name: String,
        dataType: DataType,
        shape: Shape,
        shapeSignature: Shape? = nil,
        data: Data,
        quantizationParameters: QuantizationParameters? = nil,
        perChannelQuantizationParameters: PerChannelQuantizationParameters? = nil
    ) {
        self.name = name
        self.dataType = dataType
        self.shape = shape
        self.shapeSignature = shapeSignature ?? shape
        self.data = data
        self.quantizationParameters = quantizationParameters
        self.perChannelQuantizationParameters = perChannelQuantizationParameters
    }
}

extension Tensor {
    /// The element type of a tensor.
    ///
    /// Raw values are the TensorFlow Lite (and LiteRT) type numbers.
    public enum DataType: Int, Equatable, Hashable, Sendable, CaseIterable, CustomStringConvertible {
        /// 32-bit single-precision floating point.
        case float32 = 1
        /// 32-bit signed integer.
        case int32 = 2
        /// 8-bit unsigned integer.
        case uInt8 = 3
        /// 64-bit signed integer.
        case int64 = 4
        /// A serialized string tensor (TensorFlow Lite's string buffer format).
        case string = 5
        /// Boolean, one byte per element.
        case bool = 6
        /// 16-bit signed integer.
        case int16 = 7
        /// 64-bit complex number: two 32-bit floats.
        case complex64 = 8
        /// 8-bit signed integer (full-integer quantized models).
        case int8 = 9
        /// 16-bit half-precision floating point.
        case float16 = 10
        /// 64-bit double-precision floating point.
        case float64 = 11
        /// 64-bit unsigned integer.
        case uInt64 = 13
        /// 32-bit unsigned integer.
        case uInt32 = 16
        /// 16-bit unsigned integer.
        case uInt16 = 17
        /// 16-bit brain floating point.
        case bFloat16 = 19

        /// Creates a data type from a TensorFlow Lite / LiteRT element type number, or
        /// returns `nil` for types NetRunner cannot hand out as bytes (such as packed int4).
        init?(elementType: Int32) {
            self.init(rawValue: Int(elementType))
        }

        /// Bytes per element, or `nil` for strings, whose elements vary in size.
        public var size: Int? {
            switch self {
            case .bool, .uInt8, .int8: 1
            case .int16, .uInt16, .float16, .bFloat16: 2
            case .float32, .int32, .uInt32: 4
            case .int64, .uInt64, .float64, .complex64: 8
            case .string: nil
            }
        }

        /// The lower-case name NumPy and the TFLite schema use (`float32`, `uint8`, ...).
        public var description: String {
            switch self {
            case .float32: "float32"
            case .int32: "int32"
            case .uInt8: "uint8"
            case .int64: "int64"
            case .string: "string"
            case .bool: "bool"
            case .int16: "int16"
            case .complex64: "complex64"
            case .int8: "int8"
            case .float16: "float16"
            case .float64: "float64"
            case .uInt64: "uint64"
            case .uInt32: "uint32"
            case .uInt16: "uint16"
            case .bFloat16: "bfloat16"
            }
        }
    }

    /// The shape of a tensor: its dimensions, outermost first.
    public struct Shape: Equatable, Hashable, Sendable, ExpressibleByArrayLiteral, CustomStringConvertible {
        /// The number of dimensions.
        public let rank: Int

        /// The size of each dimension.
        public let dimensions: [Int]

        /// Creates a shape from an array of dimensions.
        ///
        /// - Parameter dimensions: The size of each dimension, outermost first.
        public init(_ dimensions: [Int]) {
            self.rank = dimensions.count
            self.dimensions = dimensions
        }

        /// Creates a shape from a list of dimensions.
        ///
        /// - Parameter elements: The size of each dimension, outermost first.
        public init(_ elements: Int...) {
            self.init(elements)
        }

        /// Creates a shape from an array literal, as in `[1, 224, 224, 3]`.
        ///
        /// - Parameter elements: The size of each dimension, outermost first.
        public init(arrayLiteral elements: Int...) {
            self.init(elements)
        }

        /// The number of elements: the product of the dimensions (1 for a scalar).
        public var elementCount: Int {
            dimensions.reduce(1) { $0 * max($1, 0) }
        }

        /// The dimensions in brackets, as in `[1, 224, 224, 3]`.
        public var description: String {
            "[" + dimensions.map(String.init).joined(separator: ", ") + "]"
        }
    }

    /// How a tensor is quantized, as read from the model.
    enum Quantization: Equatable {
        case none
        case perTensor(QuantizationParameters)
        case perChannel(PerChannelQuantizationParameters)

        var perTensor: QuantizationParameters? {
            if case .perTensor(let parameters) = self { return parameters }
            return nil
        }

        var perChannel: PerChannelQuantizationParameters? {
            if case .perChannel(let parameters) = self { return parameters }
            return nil
        }
    }
}
