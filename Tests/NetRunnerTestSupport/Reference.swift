import Foundation
public import Testing

/// The reference outputs recorded once with Python `ai_edge_litert` (see
/// `tools/models/record_reference.py`), decoded from `Tests/Fixtures/Reference/reference.json`.
public struct Reference: Decodable, Sendable {
    public var aiEdgeLitert: String
    public var models: [Model]

    enum CodingKeys: String, CodingKey {
        case aiEdgeLitert = "ai_edge_litert"
        case models
    }

    /// One model and what Python's interpreter reports for it.
    public struct Model: Decodable, Sendable {
        public var file: String
        public var sha256: String
        public var bytes: Int
        public var inputs: [TensorDetails]
        public var outputs: [TensorDetails]
        public var signatures: [Signature]
        public var cases: [Case]
    }

    /// `get_input_details()` / `get_output_details()` of one tensor.
    public struct TensorDetails: Decodable, Sendable {
        public var name: String
        public var dtype: String
        public var shape: [Int]
        public var shapeSignature: [Int]
        public var quantization: Quantization?
        public var perChannel: PerChannel?
        public var signatureName: String?

        enum CodingKeys: String, CodingKey {
            case name, dtype, shape, quantization
            case shapeSignature = "shape_signature"
            case perChannel = "per_channel"
            case signatureName = "signature_name"
        }
    }

    public struct Quantization: Decodable, Sendable {
        public var scale: Double
        public var zeroPoint: Int
        enum CodingKeys: String, CodingKey {
            case scale
            case zeroPoint = "zero_point"
        }
    }

    public struct PerChannel: Decodable, Sendable {
        public var quantizedDimension: Int
        public var scales: [Double]
        public var zeroPoints: [Int]
        enum CodingKeys: String, CodingKey {
            case scales
            case quantizedDimension = "quantized_dimension"
            case zeroPoints = "zero_points"
        }
    }

    /// `get_signature_list()` and the signature runner's details of one signature.
    public struct Signature: Decodable, Sendable {
        public var key: String
        public var inputs: [String]
        public var outputs: [String]
        public var inputDetails: [TensorDetails]?
        public var outputDetails: [TensorDetails]?
        enum CodingKeys: String, CodingKey {
            case key, inputs, outputs
            case inputDetails = "input_details"
            case outputDetails = "output_details"
        }
    }

    /// One recorded run: inputs fed and outputs Python produced.
    public struct Case: Decodable, Sendable {
        public var name: String
        public var threads: Int
        /// The signature run, or `nil` for the classic interpreter API.
        public var signature: String?
        /// Input index (as a string) to new shape, for resized runs.
        public var resize: [String: [Int]]?
        public var inputs: Files
        public var outputs: Files
        /// For classifiers: the top five (index, score) pairs.
        public var top5: [[Double]]?
    }

    /// Tensor files in interpreter order, or by signature name.
    public enum Files: Decodable, Sendable {
        case ordered([String])
        case named([String: String])

        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let list = try? container.decode([String].self) {
                self = .ordered(list)
            } else {
                self = .named(try container.decode([String: String].self))
            }
        }

        public var ordered: [String] {
            if case .ordered(let list) = self { return list }
            return []
        }

        public var named: [String: String] {
            if case .named(let map) = self { return map }
            return [:]
        }
    }
}

extension Reference.Model: CustomTestStringConvertible {
    /// The model's file name, shown by parameterised tests.
    public var testDescription: String { (file as NSString).lastPathComponent }
}
