public import TensorFlowLite

extension ModelBundle {
    /// Checks the description against the model it describes: as many inputs and outputs,
    /// the same shapes (a -1 or missing batch dimension matches any), the same element types
    /// where `dtype` is given, and integer inputs for a model described as quantized.
    ///
    /// - Parameter interpreter: The model, with its tensors allocated.
    /// - Throws: ``ModelBundleError/descriptionMismatch(file:problems:)`` listing every
    ///   difference.
    public func check(against interpreter: Interpreter) throws {
        try description.check(against: interpreter, file: path + "/model.json")
    }
}

extension ModelDescription {
    /// Checks the description against the model it describes (see
    /// ``ModelBundle/check(against:)``).
    ///
    /// - Parameters:
    ///   - interpreter: The model, with its tensors allocated.
    ///   - file: The description's file, for the error.
    /// - Throws: ``ModelBundleError/descriptionMismatch(file:problems:)`` listing every
    ///   difference.
    public func check(against interpreter: Interpreter, file: String) throws {
        var problems: [ModelBundleError.Problem] = []
        let groups: [(String, [ModelDescription.Layer], Int, (Int) throws -> Tensor)] = [
            ("inputs", inputs, interpreter.inputTensorCount, interpreter.input(at:)),
            ("outputs", outputs, interpreter.outputTensorCount, interpreter.output(at:)),
        ]
        for (group, layers, count, tensor) in groups {
            guard layers.count == count else {
                problems.append(
                    .init(path: group, expected: "\(count) layers (the model's count)", found: "\(layers.count)"))
                continue
            }
            for (index, layer) in layers.enumerated() {
                let actual = try tensor(index)
                if let dtype = layer.dtype, dtype != "string", dtype != actual.dataType.description {
                    problems.append(
                        .init(
                            path: "\(group)[\(index)].dtype", expected: "\"\(actual.dataType)\" (the model's)",
                            found: "\"\(dtype)\""))
                }
                if !Self.shape(layer.shape, matches: actual.shape.dimensions) {
                    problems.append(
                        .init(
                            path: "\(group)[\(index)].shape", expected: "\(actual.shape) (the model's)",
                            found: "\(layer.shape)"))
                }
            }
        }
        if model.quantized, let input = try? interpreter.input(at: 0),
            ![.uInt8, .int8].contains(input.dataType)
        {
            problems.append(
                .init(path: "model.quantized", expected: "false: the model's input is \(input.dataType)", found: "true")
            )
        }
        if !problems.isEmpty {
            throw ModelBundleError.descriptionMismatch(file: file, problems: problems)
        }
    }

    /// Whether a described shape fits a tensor's: equal after dropping a leading batch
    /// dimension of 1 (or -1) from either.
    static func shape(_ described: [Int], matches actual: [Int]) -> Bool {
        func trimmed(_ shape: [Int]) -> [Int] {
            shape.count > 1 && (shape[0] == 1 || shape[0] == -1) ? Array(shape.dropFirst()) : shape
        }
        let a = trimmed(described)
        let b = trimmed(actual)
        return a.count == b.count && zip(a, b).allSatisfy { $0 == $1 || $0 == -1 }
    }
}
