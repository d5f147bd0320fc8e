/// A model described as TensorIO and Net Runner describe it in `model.json`.
///
/// The field names are TensorIO's (`name`, `details`, `id`, `version`, `author`, `license`,
/// `placeholder`, `model`, `inputs`, `outputs`, `options`); ``ModelDescription/parse(_:source:)``
/// reads the JSON and reports every problem with its JSON path.
public struct ModelDescription: Equatable, Hashable, Sendable {
    /// The model's display name.
    public var name: String
    /// A description of the model.
    public var details: String
    /// A unique identifier (test bundles name models by it).
    public var id: String
    /// The model's version.
    public var version: String
    /// The model's authors.
    public var author: String
    /// The model's licence.
    public var license: String
    /// Whether this is a placeholder without a usable model file.
    public var placeholder: Bool
    /// The model file and how it was built.
    public var model: Model
    /// The input layers, in the model's input order.
    public var inputs: [Layer]
    /// The output layers, in the model's output order.
    public var outputs: [Layer]
    /// Net Runner's display options.
    public var options: Options

    /// The `model` object.
    public struct Model: Equatable, Hashable, Sendable {
        /// The model file, relative to the bundle.
        public var file: String
        /// Whether the model is quantized (uint8 inputs and outputs).
        public var quantized: Bool
        /// The model type (`image.classification.imagenet`, ...), which picks the output format.
        public var type: String?
        /// The backend (`tflite`).
        public var backend: String?
        /// The modes (`predict`).
        public var modes: [String]
        /// A custom class name (TensorIO on iOS); kept, not used.
        public var className: String?
    }

    /// Net Runner's `options` object.
    public struct Options: Equatable, Hashable, Sendable {
        /// The camera to use (`front` or `back`).
        public var devicePosition: String?
        /// The output formatter to use, overriding `model.type`.
        public var outputFormat: String?
    }

    /// A linear transform with one bias per colour channel for images: TensorIO's
    /// `normalize` and `dequantize` compute `value * scale + bias`, its `denormalize` and
    /// `quantize` compute `(value + bias) * scale` (the standard strings give the scale and
    /// bias of each, as in TensorIO).
    public struct Transform: Equatable, Hashable, Sendable {
        /// The factor.
        public var scale: Float
        /// The offset of each channel (R, G, B); one value for arrays.
        public var bias: [Float]
        /// The standard string it was given as (`[0,1]` or `[-1,1]`), if any.
        public var standard: String? = nil

        /// Creates a transform.
        ///
        /// - Parameters:
        ///   - scale: The factor.
        ///   - bias: The offset of each channel (one value for arrays).
        ///   - standard: The standard string it stands for, if any.
        public init(scale: Float, bias: [Float], standard: String? = nil) {
            self.scale = scale
            self.bias = bias
            self.standard = standard
        }

        /// TensorIO's `"[0,1]"` normalisation: `pixel / 255`.
        public static let zeroToOne = Transform(scale: 1 / 255, bias: [0, 0, 0], standard: "[0,1]")
        /// TensorIO's `"[-1,1]"` normalisation: `pixel * 2 / 255 - 1`.
        public static let minusOneToOne = Transform(scale: 2 / 255, bias: [-1, -1, -1], standard: "[-1,1]")
    }

    /// One input or output layer.
    public struct Layer: Equatable, Hashable, Sendable {
        /// The layer's kind.
        public enum Kind: String, Equatable, Hashable, Sendable, CaseIterable {
            /// A tensor of numbers.
            case array
            /// An image (height, width, channels).
            case image
            /// A single number.
            case scalar
            /// A string tensor.
            case string
        }

        /// The layer's name (outputs are returned by it).
        public var name: String
        /// What the layer holds.
        public var kind: Kind
        /// The shape; -1 for a batch dimension.
        public var shape: [Int]
        /// The element type, if given (`uint8`, `float32`, `int32`, `int64`).
        public var dtype: String?
        /// The channel order of an image layer (`RGB` or `BGR`).
        public var format: String?
        /// How images fit an image input (NetRunner's `"crop"` field).
        ///
        /// `"center"` (the centred square), `"stretch"` or `"letterbox"` (the aspect kept, padded
        /// with black), as `netrunner --crop` names them. A NetRunner extension of TensorIO's format: TensorIO always centre-crops, and a
        /// detector trained on letterboxed images finds boxes too wide without it.
        public var crop: ImagePreprocessing.Cropping?
        /// Image inputs: how 0-255 pixels become the model's values.
        public var normalize: Transform?
        /// Image outputs: how the model's values become 0-255 pixels.
        public var denormalize: Transform?
        /// Array inputs: how values are quantized.
        public var quantize: Transform?
        /// Array outputs: how quantized values are turned back into real values.
        public var dequantize: Transform?
        /// Array outputs: a labels file in the bundle's `assets/` folder.
        public var labels: String?
    }
}
