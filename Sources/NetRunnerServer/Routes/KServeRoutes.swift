import FoundationEssentials
import HTTPTypes
import Hummingbird
import NIOCore
import NetRunner
import NetRunnerSupport
import TensorFlowLite

/// KServe v2, the Open Inference Protocol that Triton, MLServer and OpenVINO speak, at `/v2`:
/// health, server and model metadata, readiness, and `infer` with JSON tensors, the binary
/// tensor extension (`Inference-Header-Content-Length`) and the classification extension
/// (an output's `"classification": N` parameter answers the top N as `"score:index:label"`).
///
/// Inputs are the model's input tensors, preprocessed by the client as Triton clients do;
/// `POST /v1/models/{id}/classify` takes the encoded image instead.
struct KServeRoutes {
    let engine: InferenceEngine
    let maximumUploadBytes: Int
    let version: String

    /// The binary tensor extension's header: the length of the JSON part of the body.
    static let headerLength = HTTPField.Name.custom("Inference-Header-Content-Length")

    func add(to router: Router<BasicRequestContext>) {
        router.get("/v2") { _, _ in
            HTTPReply.json(
                ServerMetadata(
                    name: "netrunner", version: version, extensions: ["classification", "binary_tensor_data"]))
        }
        router.get("/v2/health/live") { _, _ in Response(status: .ok) }
        router.get("/v2/health/ready") { _, _ in Response(status: engine.isReady ? .ok : .serviceUnavailable) }
        for prefix in ["/v2/models/{name}", "/v2/models/{name}/versions/{version}"] {
            router.get(RouterPath(prefix)) { _, context in metadata(context.parameters.get("name") ?? "") }
            router.get(RouterPath(prefix + "/ready")) { _, context in
                Response(
                    status: engine.state(of: context.parameters.get("name") ?? "") == .ready ? .ok : .serviceUnavailable
                )
            }
            router.post(RouterPath(prefix + "/infer")) { request, context in
                await infer(request, model: context.parameters.get("name") ?? "")
            }
        }
    }

    // MARK: Metadata

    struct ServerMetadata: Encodable {
        var name: String
        var version: String
        var extensions: [String]
    }

    struct TensorMetadata: Encodable {
        var name: String
        var datatype: String
        var shape: [Int]
    }

    struct ModelMetadata: Encodable {
        var name: String
        var versions: [String]
        var platform: String
        var inputs: [TensorMetadata]
        var outputs: [TensorMetadata]
    }

    func metadata(_ name: String) -> Response {
        do {
            _ = try engine.model(name)
        } catch {
            return Self.error(error)
        }
        guard let details = engine.details(of: name) else {
            return Self.error(.modelUnavailable(id: name, reason: "it is not loaded (yet)."))
        }
        let describe = { (tensor: Tensor) in
            TensorMetadata(name: tensor.name, datatype: Self.datatype(tensor.dataType), shape: tensor.shape.dimensions)
        }
        return HTTPReply.json(
            ModelMetadata(
                name: name, versions: ["1"], platform: "tensorflow_lite", inputs: details.inputs.map(describe),
                outputs: details.outputs.map(describe)))
    }

    // MARK: Infer

    struct InferRequest: Decodable {
        struct Input: Decodable {
            var name: String
            var shape: [Int]
            var datatype: String
            var parameters: [String: JSONValue]?
            var data: JSONValue?
        }
        struct RequestedOutput: Decodable {
            var name: String
            var parameters: [String: JSONValue]?
        }
        var id: String?
        var parameters: [String: JSONValue]?
        var inputs: [Input]
        var outputs: [RequestedOutput]?
    }

    struct InferResponse: Encodable {
        struct Output: Encodable {
            var name: String
            var datatype: String
            var shape: [Int]
            var parameters: [String: Int]?
            var data: OutputData?
        }
        var modelName: String
        var modelVersion: String
        var id: String?
        var outputs: [Output]

        enum CodingKeys: String, CodingKey {
            case id, outputs
            case modelName = "model_name"
            case modelVersion = "model_version"
        }
    }

    enum OutputData: Encodable {
        case integers([Int])
        case reals([Float])
        case strings([String])

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .integers(let values): try container.encode(values)
            case .reals(let values): try container.encode(values)
            case .strings(let values): try container.encode(values)
            }
        }
    }

    struct InferError: Error {
        var message: String
        var status: HTTPResponse.Status = .badRequest
    }

    func infer(_ request: Request, model name: String) async -> Response {
        do {
            let served = try engine.model(name)
            guard let details = engine.details(of: name) else {
                throw EngineError.modelUnavailable(id: name, reason: "it is not loaded (yet).")
            }
            let body: ByteBuffer
            do {
                body = try await request.body.collect(upTo: maximumUploadBytes)
            } catch is NIOTooManyBytesError {
                throw InferError(
                    message: "The request is larger than the limit of \(maximumUploadBytes) bytes.",
                    status: .contentTooLarge)
            }
            let bytes = Data(body.readableBytesView)
            var headerLength = bytes.count
            if let declared = request.headers[Self.headerLength] {
                guard let value = Int(declared), (0...bytes.count).contains(value) else {
                    throw InferError(message: "Inference-Header-Content-Length \(declared) does not fit the body.")
                }
                headerLength = value
            }
            let parsed: InferRequest
            do {
                parsed = try JSONDecoder().decode(InferRequest.self, from: bytes.prefix(headerLength))
            } catch {
                throw InferError(message: "The inference request is not valid JSON for KServe v2: \(error)")
            }
            let inputs = try tensorData(parsed, binary: bytes.dropFirst(headerLength), details: details)
            let outputs = try await engine.run(model: name, inputs: inputs)
            return try respond(parsed, outputs: outputs, model: served, details: details)
        } catch let error as EngineError {
            return Self.error(error)
        } catch let error as InferError {
            return Self.error(error.message, status: error.status)
        } catch {
            return Self.error("\(error)", status: .badRequest)
        }
    }

    /// The bytes of each model input, from JSON `data` or the binary section, in model order.
    func tensorData(_ request: InferRequest, binary: Data, details: ModelDetails) throws -> [Data] {
        var offset = binary.startIndex
        var byName: [String: Data] = [:]
        for input in request.inputs {
            guard
                let tensor = details.inputs.first(where: { $0.name == input.name })
                    ?? (details.inputs.count == 1 && request.inputs.count == 1 ? details.inputs.first : nil)
            else {
                throw InferError(
                    message: "No input \"\(input.name)\"; the model's inputs are "
                        + details.inputs.map { "\"\($0.name)\"" }.joined(separator: ", ") + ".")
            }
            let expected = Self.datatype(tensor.dataType)
            guard input.datatype == expected else {
                throw InferError(
                    message: "Input \"\(input.name)\" is \(expected) \(tensor.shape.dimensions) in this model; "
                        + "the request sent \(input.datatype). (POST the encoded image to /v1/models/{id}/classify "
                        + "to let the server preprocess it.)")
            }
            let elementCount = input.shape.reduce(1) { $0 * max(0, $1) }
            let elementSize = tensor.dataType == .float32 || tensor.dataType == .int32 ? 4 : 1
            guard elementCount * elementSize == tensor.data.count else {
                throw InferError(
                    message: "Input \"\(input.name)\" has shape \(input.shape); the model's is "
                        + "\(tensor.shape.dimensions).")
            }
            if case .number(let size)? = input.parameters?["binary_data_size"] {
                let count = Int(size)
                guard count == tensor.data.count, binary.endIndex - offset >= count else {
                    throw InferError(message: "Input \"\(input.name)\": binary_data_size \(count) does not fit.")
                }
                byName[tensor.name] = Data(binary[offset..<(offset + count)])
                offset += count
            } else if let data = input.data {
                var values: [Double] = []
                values.reserveCapacity(elementCount)
                try Self.flatten(data, into: &values)
                guard values.count == elementCount else {
                    throw InferError(
                        message: "Input \"\(input.name)\" has \(values.count) values; its shape needs \(elementCount).")
                }
                byName[tensor.name] = Self.bytes(values, as: tensor.dataType)
            } else {
                throw InferError(message: "Input \"\(input.name)\" has neither data nor binary_data_size.")
            }
        }
        return try details.inputs.map { tensor in
            guard let data = byName[tensor.name] else {
                throw InferError(message: "The request has no value for input \"\(tensor.name)\".")
            }
            return data
        }
    }

    /// The response: every output (or those asked for), as JSON or binary, classification
    /// strings where asked.
    func respond(_ request: InferRequest, outputs: [Tensor], model: ServedModel, details: ModelDetails) throws
        -> Response
    {
        let wantsBinaryByDefault: Bool
        if case .bool(let value)? = request.parameters?["binary_data_output"] {
            wantsBinaryByDefault = value
        } else {
            wantsBinaryByDefault = false
        }
        let requested: [InferRequest.RequestedOutput] =
            request.outputs ?? outputs.map { InferRequest.RequestedOutput(name: $0.name, parameters: nil) }
        var written: [InferResponse.Output] = []
        var binary = Data()
        for asked in requested {
            guard let tensor = outputs.first(where: { $0.name == asked.name }) else {
                throw InferError(
                    message: "No output \"\(asked.name)\"; the model's outputs are "
                        + outputs.map { "\"\($0.name)\"" }.joined(separator: ", ") + ".")
            }
            var binaryWanted = wantsBinaryByDefault
            if case .bool(let value)? = asked.parameters?["binary_data"] { binaryWanted = value }
            var output: InferResponse.Output
            var raw: Data
            if case .number(let count)? = asked.parameters?["classification"] {
                let strings = Self.classification(tensor, count: Int(count), labels: details.labels)
                output = .init(
                    name: tensor.name, datatype: "BYTES", shape: [1, strings.count], data: .strings(strings))
                raw = Data()
                for string in strings {
                    let utf8 = Array(string.utf8)
                    withUnsafeBytes(of: UInt32(utf8.count).littleEndian) { raw.append(contentsOf: $0) }
                    raw.append(contentsOf: utf8)
                }
            } else {
                output = .init(
                    name: tensor.name, datatype: Self.datatype(tensor.dataType), shape: tensor.shape.dimensions,
                    data: Self.values(of: tensor))
                raw = tensor.data
            }
            if binaryWanted {
                output.data = nil
                output.parameters = ["binary_data_size": raw.count]
                binary.append(raw)
            }
            written.append(output)
        }
        let response = InferResponse(modelName: model.id, modelVersion: "1", id: request.id, outputs: written)
        guard !binary.isEmpty || written.contains(where: { $0.parameters != nil }) else {
            return HTTPReply.json(response)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let header = try encoder.encode(response)
        var body = ByteBuffer(bytes: header)
        body.writeBytes(binary)
        return Response(
            status: .ok,
            headers: [.contentType: "application/octet-stream", Self.headerLength: String(header.count)],
            body: .init(byteBuffer: body))
    }

    // MARK: Conversions

    /// KServe's name for a tensor type.
    static func datatype(_ type: Tensor.DataType) -> String {
        switch type {
        case .float32: "FP32"
        case .uInt8: "UINT8"
        case .int8: "INT8"
        case .int32: "INT32"
        case .int64: "INT64"
        case .float16: "FP16"
        case .bool: "BOOL"
        case .int16: "INT16"
        case .float64: "FP64"
        case .string: "BYTES"
        default: "\(type)".uppercased()
        }
    }

    static func flatten(_ value: JSONValue, into values: inout [Double]) throws {
        switch value {
        case .number(let number): values.append(number)
        case .bool(let flag): values.append(flag ? 1 : 0)
        case .array(let items): for item in items { try flatten(item, into: &values) }
        default: throw InferError(message: "Tensor data must be numbers (nested arrays allowed), found \(value.shown).")
        }
    }

    static func bytes(_ values: [Double], as type: Tensor.DataType) -> Data {
        switch type {
        case .float32:
            return values.map { Float($0) }.withUnsafeBytes { Data($0) }
        case .int32:
            return values.map { Int32(clamping: Int(max(-2e9, min(2e9, $0)))) }.withUnsafeBytes { Data($0) }
        case .int8:
            return Data(values.map { UInt8(bitPattern: Int8(clamping: Int(max(-128, min(127, $0))))) })
        default:
            return Data(values.map { UInt8(clamping: Int(max(0, min(255, $0)))) })
        }
    }

    static func values(of tensor: Tensor) -> OutputData {
        switch tensor.dataType {
        case .float32:
            return .reals(tensor.data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) })
        case .uInt8:
            return .integers(tensor.data.map { Int($0) })
        case .int8:
            return .integers(tensor.data.map { Int(Int8(bitPattern: $0)) })
        case .int32:
            return .integers(tensor.data.withUnsafeBytes { $0.bindMemory(to: Int32.self).map { Int($0) } })
        default:
            return .integers(tensor.data.map { Int($0) })
        }
    }

    /// Triton's classification strings: the top `count` scores as `"score:index:label"`,
    /// scores dequantized, six decimals.
    static func classification(_ tensor: Tensor, count: Int, labels: LabelMap?) -> [String] {
        let scores = (try? tensor.dequantizedValues()) ?? []
        let top = Scores.topK(scores, k: max(1, count))
        return top.map { index in
            let score = fixedDecimals(Double(scores[index]), 6)
            if let labels, labels.labels.indices.contains(index) { return "\(score):\(index):\(labels.labels[index])" }
            return "\(score):\(index)"
        }
    }

    /// KServe's error body: `{"error": "..."}`.
    static func error(_ message: String, status: HTTPResponse.Status, headers: HTTPFields = [:]) -> Response {
        struct Body: Encodable { var error: String }
        return HTTPReply.json(Body(error: message), status: status, headers: headers)
    }

    static func error(_ failure: EngineError) -> Response {
        error("\(failure)", status: .init(code: failure.statusCode), headers: HTTPReply.retryHeaders(failure))
    }
}
