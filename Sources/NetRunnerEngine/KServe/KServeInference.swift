package import FoundationEssentials
package import NetRunner
import NetRunnerSupport
package import TensorFlowLite

/// One KServe v2 inference without HTTP: a request's body read into the model's input tensors
/// (JSON `data` or the binary tensor extension), and the outputs written as the response body
/// (JSON, binary, or Triton's classification strings).
///
/// Every refusal is a ``KServeTensorCodec/Refusal`` naming the input, output or parameter at
/// fault; the server answers it 400.
package struct KServeInference {
    /// The request's JSON, without its inputs' `data` (``KServeInferBody`` finds those).
    package struct Request: Decodable {
        /// One input as the request describes it.
        package struct Input: Decodable {
            var name: String
            var shape: [Int]
            var datatype: String
            var parameters: [String: JSONValue]?
            // `data` is not decoded: ``KServeInferBody`` finds it, ``KServeTensorCodec`` reads it.
        }
        /// An output asked for, with its parameters.
        package struct RequestedOutput: Decodable {
            var name: String
            var parameters: [String: JSONValue]?
        }
        var id: String?
        var parameters: [String: JSONValue]?
        var inputs: [Input]
        var outputs: [RequestedOutput]?
    }

    /// The response body: JSON alone, or JSON followed by binary outputs.
    package struct Response {
        /// The body.
        package var body: [UInt8]
        /// The JSON part's length when binary outputs follow it (`Inference-Header-Content-Length`),
        /// else `nil`.
        package var jsonLength: Int?
    }

    /// The request.
    package let request: Request
    /// Each model input's bytes, in the model's order.
    package let inputs: [Data]

    /// Reads a request's body.
    ///
    /// - Parameters:
    ///   - bytes: The body.
    ///   - declared: The `Inference-Header-Content-Length` header, if given: the JSON part's
    ///     length, binary tensors after it.
    ///   - details: The model's tensors.
    /// - Throws: ``KServeTensorCodec/Refusal`` for a body the model cannot take.
    package init(body bytes: UnsafeRawBufferPointer, headerLength declared: String?, details: ModelDetails)
        throws(KServeTensorCodec.Refusal)
    {
        var headerLength = bytes.count
        if let declared {
            headerLength = try Self.checked { () throws(NumberOutOfRange) in
                try CheckedNumber.integer(declared, "Inference-Header-Content-Length", in: 0...bytes.count)
            }
        }
        let json = UnsafeRawBufferPointer(rebasing: bytes[0..<headerLength])
        let located = try KServeInferBody(json: json)
        do {
            request = try JSONDecoder().decode(Request.self, from: located.skeleton)
        } catch {
            var problem = Self.describe(error)
            if let (line, column, reason) = JSONSyntax.firstError(in: located.skeleton) {
                problem = "line \(line), column \(column): \(reason)"
            }
            throw KServeTensorCodec.Refusal(
                description: "The inference request is not valid JSON for KServe v2: \(problem)")
        }
        let binary = UnsafeRawBufferPointer(rebasing: bytes[headerLength...])
        inputs = try Self.tensorData(request, json: json, data: located.data, binary: binary, details: details)
    }

    /// A decoding error as a client can act on it: where, and what (`at inputs[0].shape[0]:
    /// Parsed JSON number <1e30> does not fit in Int.`).
    ///
    /// - Parameter error: `JSONDecoder`'s error.
    /// - Returns: The message.
    package static func describe(_ error: any Error) -> String {
        let context: DecodingError.Context
        switch error as? DecodingError {
        case .typeMismatch(_, let found), .valueNotFound(_, let found), .keyNotFound(_, let found),
            .dataCorrupted(let found):
            context = found
        default: return "\(error)"
        }
        var path = ""
        for key in context.codingPath {
            if let index = key.intValue {
                path += "[\(index)]"
            } else {
                path += (path.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return (path.isEmpty ? "" : "at \(path): ") + context.debugDescription
    }

    /// Runs a conversion of ``CheckedNumber``, its refusal as the codec's.
    static func checked<Value>(_ body: () throws(NumberOutOfRange) -> Value) throws(KServeTensorCodec.Refusal)
        -> Value
    {
        do {
            return try body()
        } catch {
            throw KServeTensorCodec.Refusal(description: error.description)
        }
    }

    /// A parameter that must be a whole number, if given.
    static func integer(
        _ parameters: [String: JSONValue]?, _ key: String, of what: String, in range: ClosedRange<Int>
    ) throws(KServeTensorCodec.Refusal) -> Int? {
        guard let value = parameters?[key] else { return nil }
        guard case .number(let number) = value else {
            throw KServeTensorCodec.Refusal(description: "\(what): \(key) must be a number, not \(value.shown).")
        }
        return try checked { () throws(NumberOutOfRange) in
            try CheckedNumber.integer(number, "\(key) of \(what)", in: range)
        }
    }

    /// A parameter that must be true or false, if given.
    static func flag(_ parameters: [String: JSONValue]?, _ key: String, of what: String)
        throws(KServeTensorCodec.Refusal) -> Bool?
    {
        guard let value = parameters?[key] else { return nil }
        guard case .bool(let flag) = value else {
            throw KServeTensorCodec.Refusal(description: "\(what): \(key) must be true or false, not \(value.shown).")
        }
        return flag
    }

    /// The bytes of each model input, from JSON `data` or the binary section, in model order.
    static func tensorData(
        _ request: Request, json: UnsafeRawBufferPointer, data: [Int: Range<Int>],
        binary: UnsafeRawBufferPointer, details: ModelDetails
    ) throws(KServeTensorCodec.Refusal) -> [Data] {
        var offset = 0
        var byName: [String: Data] = [:]
        for (position, input) in request.inputs.enumerated() {
            guard
                let tensor = details.inputs.first(where: { $0.name == input.name })
                    ?? (details.inputs.count == 1 && request.inputs.count == 1 ? details.inputs.first : nil)
            else {
                throw KServeTensorCodec.Refusal(
                    description: "No input \"\(input.name)\"; the model's inputs are "
                        + details.inputs.map { "\"\($0.name)\"" }.joined(separator: ", ") + ".")
            }
            guard byName[tensor.name] == nil else {
                throw KServeTensorCodec.Refusal(description: "Input \"\(tensor.name)\" is given twice.")
            }
            let expected = KServeTensorCodec.name(tensor.dataType)
            guard let size = KServeTensorCodec.datatype(tensor.dataType)?.size else {
                throw KServeTensorCodec.Refusal(
                    description:
                        "Input \"\(input.name)\" is \(tensor.dataType) \(tensor.shape.dimensions) in this model, "
                        + "which this server cannot take over KServe v2.")
            }
            guard input.datatype == expected else {
                throw KServeTensorCodec.Refusal(
                    description: "Input \"\(input.name)\" is \(expected) \(tensor.shape.dimensions) in this model; "
                        + "the request sent \(input.datatype). (POST the encoded image to /v1/models/{id}/classify "
                        + "to let the server preprocess it.)")
            }
            let modelCount = tensor.data.count / size
            let mismatch = KServeTensorCodec.Refusal(
                description:
                    "Input \"\(input.name)\" has shape \(KServeTensorCodec.shown(input.shape)); the model's is "
                    + "\(tensor.shape.dimensions).")
            // The product with a limit: a shape like [2^62, 4] overflows Int.
            guard let elementCount = try? CheckedNumber.product(input.shape, "shape", limit: modelCount),
                elementCount == modelCount
            else { throw mismatch }
            let what = "input \"\(input.name)\""
            if let count = try Self.integer(
                input.parameters, "binary_data_size", of: what, in: 0...max(0, binary.count - offset))
            {
                guard count == tensor.data.count else {
                    throw KServeTensorCodec.Refusal(
                        description: "Input \"\(input.name)\": binary_data_size \(count) does not fit: the tensor is "
                            + "\(tensor.data.count) bytes.")
                }
                byName[tensor.name] = Data(UnsafeRawBufferPointer(rebasing: binary[offset..<(offset + count)]))
                offset += count
            } else if let range = data[position],
                !UnsafeRawBufferPointer(rebasing: json[range]).elementsEqual("null".utf8)
            {
                byName[tensor.name] = try KServeTensorCodec.decode(
                    json: UnsafeRawBufferPointer(rebasing: json[range]), as: tensor.dataType, shape: input.shape,
                    count: elementCount, input: input.name)
            } else {
                throw KServeTensorCodec.Refusal(
                    description: "Input \"\(input.name)\" has neither data nor binary_data_size.")
            }
        }
        return try details.inputs.map { (tensor) throws(KServeTensorCodec.Refusal) in
            guard let data = byName[tensor.name] else {
                throw KServeTensorCodec.Refusal(description: "The request has no value for input \"\(tensor.name)\".")
            }
            return data
        }
    }

    /// The response: every output (or those asked for), as JSON or binary.
    ///
    /// Classification strings where asked. Written by hand, as ``KServeTensorCodec`` writes `data`.
    ///
    /// - Parameters:
    ///   - outputs: The model's outputs.
    ///   - model: The model's id.
    ///   - labels: Its labels, for classification strings.
    /// - Returns: The body.
    /// - Throws: ``KServeTensorCodec/Refusal`` for an output or parameter asked wrongly.
    package func response(outputs: [Tensor], model: String, labels: LabelMap?) throws(KServeTensorCodec.Refusal)
        -> Response
    {
        let wantsBinaryByDefault = try Self.flag(request.parameters, "binary_data_output", of: "the request") ?? false
        let requested: [Request.RequestedOutput] =
            request.outputs ?? outputs.map { Request.RequestedOutput(name: $0.name, parameters: nil) }
        var text: [UInt8] = []
        var binary = Data()
        var anyBinary = false
        text.append(contentsOf: #"{"model_name":"#.utf8)
        KServeTensorCodec.appendString(model.utf8, to: &text)
        text.append(contentsOf: #","model_version":"1""#.utf8)
        if let id = request.id {
            text.append(contentsOf: #","id":"#.utf8)
            KServeTensorCodec.appendString(id.utf8, to: &text)
        }
        text.append(contentsOf: #","outputs":["#.utf8)
        // Each output once: a body of 700,000 copies of one name would otherwise ask for gigabytes.
        var seen: Set<String> = []
        for asked in requested where !seen.insert(asked.name).inserted {
            throw KServeTensorCodec.Refusal(description: "Output \"\(asked.name)\" is asked for twice.")
        }
        for (position, asked) in requested.enumerated() {
            guard let tensor = outputs.first(where: { $0.name == asked.name }) else {
                throw KServeTensorCodec.Refusal(
                    description: "No output \"\(asked.name)\"; the model's outputs are "
                        + outputs.map { "\"\($0.name)\"" }.joined(separator: ", ") + ".")
            }
            let what = "output \"\(asked.name)\""
            let binaryWanted = try Self.flag(asked.parameters, "binary_data", of: what) ?? wantsBinaryByDefault
            let datatype: String
            let shape: [Int]
            var raw: Data
            var data: [UInt8] = []
            if let count = try Self.integer(asked.parameters, "classification", of: what, in: 1...Int.max) {
                let strings = Self.classification(tensor, count: count, labels: labels)
                (datatype, shape) = ("BYTES", [1, strings.count])
                let elements = strings.map { Array($0.utf8) }
                raw = KServeTensorCodec.binary(elements)
                data.append(UInt8(ascii: "["))
                for (index, element) in elements.enumerated() {
                    if index > 0 { data.append(UInt8(ascii: ",")) }
                    KServeTensorCodec.appendString(element, to: &data)
                }
                data.append(UInt8(ascii: "]"))
            } else {
                (datatype, shape) = (KServeTensorCodec.name(tensor.dataType), tensor.shape.dimensions)
                raw = tensor.data
                if tensor.dataType == .string, let elements = KServeTensorCodec.strings(tensor.data) {
                    raw = KServeTensorCodec.binary(elements)
                }
                if !binaryWanted {
                    try KServeTensorCodec.appendJSON(tensor.data, as: tensor.dataType, to: &data)
                }
            }
            if position > 0 { text.append(UInt8(ascii: ",")) }
            text.append(contentsOf: #"{"name":"#.utf8)
            KServeTensorCodec.appendString(tensor.name.utf8, to: &text)
            text.append(contentsOf: #","datatype":"#.utf8)
            KServeTensorCodec.appendString(datatype.utf8, to: &text)
            text.append(contentsOf: (#","shape":["# + shape.map(String.init).joined(separator: ",") + "]").utf8)
            if binaryWanted {
                anyBinary = true
                text.append(contentsOf: #","parameters":{"binary_data_size":\#(raw.count)}}"#.utf8)
                binary.append(raw)
            } else {
                text.append(contentsOf: #","data":"#.utf8)
                text.append(contentsOf: data)
                text.append(UInt8(ascii: "}"))
            }
        }
        text.append(contentsOf: "]}".utf8)
        guard anyBinary else { return Response(body: text, jsonLength: nil) }
        let length = text.count
        text.append(contentsOf: binary)
        return Response(body: text, jsonLength: length)
    }

    /// Triton's classification strings: the top `count` scores as `"score:index:label"`,
    /// scores dequantized, six decimals; a count past the scores gives them all.
    static func classification(_ tensor: Tensor, count: Int, labels: LabelMap?) -> [String] {
        let scores = (try? tensor.dequantizedValues()) ?? []
        let top = Scores.topK(scores, k: count)
        return top.map { index in
            let score = fixedDecimals(Double(scores[index]), 6)
            if let labels, labels.labels.indices.contains(index) { return "\(score):\(index):\(labels.labels[index])" }
            return "\(score):\(index)"
        }
    }
}
