import FoundationEssentials
import NetRunnerSupport
import TensorFlowLite

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension ModelBundle {
    /// Writes a new bundle for a `.tflite` model: `model.json`, the model file, and its labels
    /// in `assets/`, filled from the model's TFLite metadata where it has some.
    ///
    /// The bundle is written to a temporary folder beside `path` and renamed into place, so
    /// a failure leaves nothing half-written; an existing `path` is never overwritten.
    ///
    /// - Parameters:
    ///   - path: The bundle folder to create (`name.tiobundle`).
    ///   - modelPath: The model file.
    ///   - labelsPath: A labels file for output 0; `nil` uses the labels packed in the model.
    ///   - normalization: The image input's TensorIO normalisation (`[0,1]`, `[-1,1]`, or
    ///     scale and bias); `nil` uses the metadata's, else `[0,1]` for float inputs.
    ///   - type: The model type (`image.classification.imagenet` by default for classifiers).
    ///   - crop: How images fit the image input (NetRunner's `"crop"` field); `nil` writes none
    ///     (the task's default).
    ///   - details: The description's `details`; `nil` takes the metadata's.
    /// - Returns: The new bundle.
    /// - Throws: ``ModelBundleError`` when `path` exists or cannot be written; the
    ///   interpreter's errors for a bad model.
    @discardableResult
    public static func create(
        at path: String, modelPath: String, labelsPath: String? = nil,
        normalization: ModelDescription.Transform? = nil, type: String? = nil,
        crop: ImagePreprocessing.Cropping? = nil, details: String? = nil
    ) throws -> ModelBundle {
        let folder = path.hasSuffix("/") ? String(path.dropLast()) : path
        guard access(folder, F_OK) != 0 else {
            throw ModelBundleError.alreadyExists(path: folder)
        }
        // Through the model gate, as every model loaded in process.
        let data = try Interpreter.modelData(contentsOf: modelPath)
        try ModelGate.admit(
            try LoadedModel(.bundleData(name: modelPath, modelData: data, description: nil, assets: [:])))
        let interpreter = try Interpreter(modelData: data, source: modelPath)
        try interpreter.allocateTensors()
        let metadata = try interpreter.modelMetadata().map { try TFLiteMetadata($0, source: modelPath) }
        let modelFile = modelPath.split(separator: "/").last.map(String.init) ?? "model.tflite"
        let stem = modelFile.hasSuffix(".tflite") ? String(modelFile.dropLast(7)) : modelFile

        var inputs: [[String: Any]] = []
        for index in 0..<interpreter.inputTensorCount {
            let tensor = try interpreter.input(at: index)
            let shape = tensor.shape.dimensions
            var layer: [String: Any] = ["name": metadata?.inputs[safe: index]?.name ?? tensor.name]
            if shape.count == 4, shape[0] == 1, [1, 3].contains(shape[3]) {
                layer["type"] = "image"
                layer["shape"] = Array(shape.dropFirst())
                layer["format"] = "RGB"
                switch crop {
                case .centerSquare?: layer["crop"] = "center"
                case .stretch?: layer["crop"] = "stretch"
                case .letterbox?: layer["crop"] = "letterbox"
                case nil: break
                }
                if tensor.dataType == .float32 {
                    let transform =
                        normalization ?? metadata?.inputs[safe: index]?.normalization.map(Self.transform)
                        ?? ModelDescription.Transform(scale: 1 / 255, bias: [0, 0, 0], standard: "[0,1]")
                    layer["normalize"] = Self.json(transform)
                }
            } else {
                layer["type"] = "array"
                layer["shape"] = shape
                layer["dtype"] = tensor.dataType.description
            }
            inputs.append(layer)
        }
        var labels: (name: String, data: Data)?
        if let labelsPath {
            guard let data = try? FileIO.contents(of: labelsPath) else {
                throw NetRunnerError.unreadableLabels(file: labelsPath, reason: "no such file or not readable")
            }
            labels = ("labels.txt", data)
        } else if let file = metadata?.outputs.first?.labelsFile() {
            let packed = try PackedFiles(
                model: try FileIO.contents(of: modelPath), source: modelPath)
            if let data = packed.files[file.name] { labels = ("labels.txt", data) }
        }
        var outputs: [[String: Any]] = []
        for index in 0..<interpreter.outputTensorCount {
            let tensor = try interpreter.output(at: index)
            var layer: [String: Any] = [
                "name": metadata?.outputs[safe: index]?.name ?? tensor.name, "type": "array",
                "shape": tensor.shape.dimensions,
            ]
            if index == 0, let labels {
                // A segmenter's class indices (`[1, H, W]`) say nothing of how many classes it has.
                let indexMap =
                    ImageTask.kind(type: type) == .segmentation
                    && ImageSegmenter.output(of: tensor)
                        == .classIndices(
                            height: tensor.shape.dimensions[safe: 1] ?? 0, width: tensor.shape.dimensions[safe: 2] ?? 0)
                let classes = indexMap ? nil : tensor.shape.dimensions.last ?? 0
                _ = try LabelMap(
                    text: String(decoding: labels.data, as: UTF8.self), source: labelsPath ?? modelPath,
                    classCount: classes)
                layer["labels"] = labels.name
            }
            outputs.append(layer)
        }
        let isClassifier = labels != nil && interpreter.outputTensorCount == 1
        var model: [String: Any] = [
            "file": modelFile, "quantized": [.uInt8, .int8].contains(try interpreter.input(at: 0).dataType),
            "backend": "tflite", "modes": ["predict"],
        ]
        if let chosen = type ?? (isClassifier ? "image.classification" : nil) { model["type"] = chosen }
        let description: [String: Any] = [
            "name": metadata?.name ?? stem, "details": details ?? metadata?.description ?? "",
            "id": String(stem.lowercased().map { $0 == "_" ? "-" : $0 }), "version": metadata?.version ?? "1",
            "author": metadata?.author ?? "", "license": metadata?.license ?? "", "model": model, "inputs": inputs,
            "outputs": outputs,
        ]
        let json = Self.serialize(description)

        // Write everything beside the destination, then rename it into place.
        let parent = folder.contains("/") ? String(folder[..<(folder.lastIndex(of: "/") ?? folder.endIndex)]) : "."
        var template = Array((parent + "/.netrunner-bundle-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw ModelBundleError.notABundle(path: folder, reason: "cannot write beside it")
        }
        let staging = String(cString: made)
        do {
            try Data(json.utf8).write(to: URL(fileURLWithPath: staging + "/model.json"))
            try FileManager.default.copyItem(atPath: modelPath, toPath: staging + "/" + modelFile)
            if let labels {
                try FileManager.default.createDirectory(atPath: staging + "/assets", withIntermediateDirectories: true)
                try labels.data.write(to: URL(fileURLWithPath: staging + "/assets/" + labels.name))
            }
            chmod(staging, 0o755)
            guard rename(staging, folder) == 0 else {
                throw ModelBundleError.notABundle(path: folder, reason: "cannot create it")
            }
        } catch {
            try? FileManager.default.removeItem(atPath: staging)
            throw error
        }
        return try ModelBundle(path: folder)
    }

    private static func transform(_ normalization: TFLiteMetadata.Normalization) -> ModelDescription.Transform {
        // (x - mean) / std  <=>  x * (1 / std) + (-mean / std), as TensorIO writes it.
        let std = normalization.std.first ?? 1
        let means =
            normalization.mean.count == 1 ? Array(repeating: normalization.mean[0], count: 3) : normalization.mean
        if std == 255, means.allSatisfy({ $0 == 0 }) {
            return .init(scale: 1 / 255, bias: [0, 0, 0], standard: "[0,1]")
        }
        if std == 127.5, means.allSatisfy({ $0 == 127.5 }) {
            return .init(scale: 2 / 255, bias: [-1, -1, -1], standard: "[-1,1]")
        }
        return .init(scale: 1 / std, bias: means.map { -$0 / std })
    }

    private static func json(_ transform: ModelDescription.Transform) -> [String: Any] {
        if let standard = transform.standard { return ["standard": standard] }
        let bias: Any =
            Set(transform.bias).count == 1
            ? Double(transform.bias[0])
            : ["r": Double(transform.bias[0]), "g": Double(transform.bias[1]), "b": Double(transform.bias[2])]
        return ["scale": Double(transform.scale), "bias": bias]
    }

    /// Pretty JSON with sorted keys, written by hand so the output is stable.
    private static func serialize(_ value: Any, indent: String = "") -> String {
        let inner = indent + "  "
        switch value {
        case let object as [String: Any]:
            let keys = object.keys.sorted()
            return "{\n"
                + keys.map { "\(inner)\(quote($0)): \(serialize(object[$0] ?? "", indent: inner))" }.joined(
                    separator: ",\n")
                + "\n\(indent)}"
        case let array as [[String: Any]]:
            return "[\n" + array.map { inner + serialize($0, indent: inner) }.joined(separator: ",\n") + "\n\(indent)]"
        case let numbers as [Int]:
            return "[" + numbers.map(String.init).joined(separator: ", ") + "]"
        case let strings as [String]:
            return "[" + strings.map(quote).joined(separator: ", ") + "]"
        case let text as String:
            return quote(text)
        case let flag as Bool:
            return flag ? "true" : "false"
        case let number as Double:
            return "\(number)"
        default:
            return "null"
        }
    }

    private static func quote(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }
}

extension Array {
    fileprivate subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
