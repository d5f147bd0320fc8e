public import FoundationEssentials
import NetRunnerSupport

extension ModelDescription {
    /// Parses and validates a `model.json`.
    ///
    /// Every field of TensorIO's schema is checked; all problems are collected and reported
    /// together, each with its JSON path, what was expected and what was found. Trailing
    /// commas and comments are accepted (JSON5), as TensorIO's published examples have them.
    ///
    /// - Parameters:
    ///   - data: The file's bytes.
    ///   - source: The file's name, for errors.
    /// - Returns: The description.
    /// - Throws: ``ModelBundleError/malformedJSON(file:reason:)``,
    ///   ``ModelBundleError/invalidDescription(file:problems:)``.
    public static func parse(_ data: Data, source: String = "model.json") throws(ModelBundleError) -> ModelDescription {
        let json: JSONValue
        do {
            json = try JSONValue.parse(data, source: source)
        } catch {
            throw .malformedJSON(file: error.file, reason: error.reason)
        }
        var reader = DescriptionReader()
        let description = reader.description(json)
        guard reader.problems.isEmpty, let description else {
            throw .invalidDescription(file: source, problems: reader.problems)
        }
        return description
    }
}

/// Walks a JSON value, reading a description and collecting every problem.
private struct DescriptionReader {
    var problems: [ModelBundleError.Problem] = []

    mutating func problem(_ path: String, _ expected: String, _ found: JSONValue?) {
        problems.append(.init(path: path, expected: expected, found: found?.shown ?? "missing"))
    }

    mutating func string(_ object: [String: JSONValue], _ key: String, at path: String, required: Bool = true)
        -> String?
    {
        switch object[key] {
        case .string(let value): return value
        case nil where !required: return nil
        case let other: problem(path + key, "a string", other)
        }
        return nil
    }

    mutating func bool(_ object: [String: JSONValue], _ key: String, at path: String, required: Bool) -> Bool? {
        switch object[key] {
        case .bool(let value): return value
        case nil where !required: return nil
        case let other: problem(path + key, "true or false", other)
        }
        return nil
    }

    mutating func description(_ json: JSONValue) -> ModelDescription? {
        guard case .object(let top) = json else {
            problem("$", "an object", json)
            return nil
        }
        let name = string(top, "name", at: "")
        let details = string(top, "details", at: "")
        let id = string(top, "id", at: "")
        let version = string(top, "version", at: "")
        let author = string(top, "author", at: "")
        let license = string(top, "license", at: "")
        let placeholder = bool(top, "placeholder", at: "", required: false) ?? false
        let model = self.model(top["model"])
        let inputs = layers(top["inputs"], at: "inputs", input: true)
        let outputs = layers(top["outputs"], at: "outputs", input: false)
        let options = self.options(top["options"])
        guard let name, let details, let id, let version, let author, let license, let model, let inputs, let outputs
        else { return nil }
        return ModelDescription(
            name: name, details: details, id: id, version: version, author: author, license: license,
            placeholder: placeholder, model: model, inputs: inputs, outputs: outputs, options: options)
    }

    mutating func model(_ json: JSONValue?) -> ModelDescription.Model? {
        guard case .object(let object) = json else {
            problem("model", "an object with \"file\" and \"quantized\"", json)
            return nil
        }
        let file = string(object, "file", at: "model.")
        let quantized = bool(object, "quantized", at: "model.", required: true)
        let type = string(object, "type", at: "model.", required: false)
        let backend = string(object, "backend", at: "model.", required: false)
        if let backend, backend != "tflite" {
            problem("model.backend", "\"tflite\" (the only backend NetRunner runs)", .string(backend))
        }
        var modes: [String] = []
        switch object["modes"] {
        case nil: break
        case .array(let values):
            for (index, value) in values.enumerated() {
                if case .string(let mode) = value, ["predict", "train", "eval"].contains(mode) {
                    modes.append(mode)
                } else {
                    problem("model.modes[\(index)]", "\"predict\", \"train\" or \"eval\"", value)
                }
            }
        case let other: problem("model.modes", "an array of strings", other)
        }
        let className = string(object, "class", at: "model.", required: false)
        guard let file, let quantized else { return nil }
        return .init(file: file, quantized: quantized, type: type, backend: backend, modes: modes, className: className)
    }

    mutating func options(_ json: JSONValue?) -> ModelDescription.Options {
        guard let json else { return .init() }
        guard case .object(let object) = json else {
            problem("options", "an object", json)
            return .init()
        }
        let position = string(object, "device_position", at: "options.", required: false)
        if let position, !["front", "back"].contains(position) {
            problem("options.device_position", "\"front\" or \"back\"", .string(position))
        }
        return .init(
            devicePosition: position, outputFormat: string(object, "output_format", at: "options.", required: false))
    }

    mutating func layers(_ json: JSONValue?, at path: String, input: Bool) -> [ModelDescription.Layer]? {
        guard case .array(let values) = json else {
            problem(path, "an array of layers", json)
            return nil
        }
        var layers: [ModelDescription.Layer] = []
        var names: Set<String> = []
        for (index, value) in values.enumerated() {
            let layerPath = "\(path)[\(index)]"
            guard let layer = self.layer(value, at: layerPath, input: input) else { continue }
            if !names.insert(layer.name).inserted {
                problem(layerPath + ".name", "a name no other layer has", .string(layer.name))
            }
            layers.append(layer)
        }
        return layers.count == values.count ? layers : nil
    }

    mutating func layer(_ json: JSONValue, at path: String, input: Bool) -> ModelDescription.Layer? {
        guard case .object(let object) = json else {
            problem(path, "a layer object", json)
            return nil
        }
        let prefix = path + "."
        let name = string(object, "name", at: prefix)
        var kind: ModelDescription.Layer.Kind?
        switch object["type"] {
        case .string(let text) where ModelDescription.Layer.Kind(rawValue: text) != nil:
            kind = ModelDescription.Layer.Kind(rawValue: text)
        case let other:
            problem(prefix + "type", "\"array\", \"image\", \"scalar\" or \"string\"", other)
        }
        var shape: [Int] = []
        switch object["shape"] {
        case .array(let values) where !values.isEmpty:
            for (index, value) in values.enumerated() {
                if case .number(let number) = value, number == number.rounded(), number == -1 || number >= 1,
                    number < 1e9
                {
                    shape.append(Int(number))
                } else {
                    problem("\(prefix)shape[\(index)]", "a positive integer or -1", value)
                }
            }
        case nil where kind == .scalar:
            shape = [1]
        case let other:
            problem(prefix + "shape", "an array of dimensions", other)
        }
        let dtype = string(object, "dtype", at: prefix, required: kind == .string)
        if let dtype, !["uint8", "float32", "int32", "int64", "string"].contains(dtype) {
            problem(prefix + "dtype", "\"uint8\", \"float32\", \"int32\" or \"int64\"", .string(dtype))
        }
        var format: String?
        var crop: ImagePreprocessing.Cropping?
        if kind == .image {
            switch string(object, "crop", at: prefix, required: false) {
            case nil: break
            case "center": crop = .centerSquare
            case "stretch": crop = .stretch
            case "letterbox": crop = .letterbox
            case let other?: problem(prefix + "crop", "\"center\", \"stretch\" or \"letterbox\"", .string(other))
            }
            format = string(object, "format", at: prefix)
            if let chosen = format, !["RGB", "BGR"].contains(chosen) {
                problem(prefix + "format", "\"RGB\" or \"BGR\"", .string(chosen))
            }
            if shape.count == 3, ![1, 3, 4].contains(shape[2]) {
                problem(prefix + "shape[2]", "1, 3 or 4 channels", .number(Double(shape[2])))
            }
            if !shape.isEmpty, shape.count != 3, !(shape.count == 4 && shape[0] <= 1) {
                problem(prefix + "shape", "[height, width, channels]", .array(shape.map { .number(Double($0)) }))
            }
        }
        let channels = kind == .image ? 3 : 1
        let normalize = transform(object["normalize"], at: prefix + "normalize", channels: channels, kind: .normalize)
        let denormalize = transform(
            object["denormalize"], at: prefix + "denormalize", channels: channels, kind: .denormalize)
        let quantize = transform(object["quantize"], at: prefix + "quantize", channels: 1, kind: .quantize)
        let dequantize = transform(object["dequantize"], at: prefix + "dequantize", channels: 1, kind: .dequantize)
        let labels = string(object, "labels", at: prefix, required: false)
        if input, labels != nil { problem(prefix + "labels", "no labels on an input", object["labels"]) }
        if input, denormalize != nil {
            problem(prefix + "denormalize", "denormalize only on outputs", object["denormalize"])
        }
        if !input, normalize != nil { problem(prefix + "normalize", "normalize only on inputs", object["normalize"]) }
        if input, dequantize != nil {
            problem(prefix + "dequantize", "dequantize only on outputs", object["dequantize"])
        }
        if !input, quantize != nil { problem(prefix + "quantize", "quantize only on inputs", object["quantize"]) }
        guard let name, let kind else { return nil }
        return .init(
            name: name, kind: kind, shape: shape, dtype: dtype, format: format, crop: crop, normalize: normalize,
            denormalize: denormalize, quantize: quantize, dequantize: dequantize, labels: labels)
    }

    enum TransformKind { case normalize, denormalize, quantize, dequantize }

    /// `{"standard": "[0,1]" | "[-1,1]"}` or `{"scale": n, "bias": n | {"r", "g", "b"}}`; the
    /// standard wins when both are given, as in TensorIO.
    mutating func transform(
        _ json: JSONValue?, at path: String, channels: Int, kind: TransformKind
    ) -> ModelDescription.Transform? {
        guard let json else { return nil }
        guard case .object(let object) = json else {
            problem(path, "an object with \"standard\", or \"scale\" and \"bias\"", json)
            return nil
        }
        if let standard = object["standard"] {
            guard case .string(let text) = standard, ["[0,1]", "[-1,1]"].contains(text) else {
                problem(path + ".standard", "\"[0,1]\" or \"[-1,1]\"", standard)
                return nil
            }
            let unit = text == "[0,1]"
            let (scale, bias): (Float, Float)
            switch kind {
            case .normalize, .dequantize: (scale, bias) = unit ? (1 / 255, 0) : (2 / 255, -1)
            case .denormalize, .quantize: (scale, bias) = unit ? (255, 0) : (127.5, 1)
            }
            return .init(scale: scale, bias: Array(repeating: bias, count: channels), standard: text)
        }
        var scale: Float?
        switch object["scale"] {
        case .number(let value) where value.isFinite && value != 0: scale = Float(value)
        case let other: problem(path + ".scale", "a non-zero number", other)
        }
        var bias: [Float] = Array(repeating: 0, count: channels)
        switch object["bias"] {
        case nil: break
        case .number(let value) where value.isFinite: bias = Array(repeating: Float(value), count: channels)
        case .object(let perChannel) where channels == 3:
            for (index, key) in ["r", "g", "b"].enumerated() {
                if case .number(let value) = perChannel[key], value.isFinite {
                    bias[index] = Float(value)
                } else {
                    problem("\(path).bias.\(key)", "a number", perChannel[key])
                }
            }
        case let other: problem(path + ".bias", channels == 3 ? "a number or {\"r\", \"g\", \"b\"}" : "a number", other)
        }
        guard let scale else { return nil }
        return .init(scale: scale, bias: bias)
    }
}
