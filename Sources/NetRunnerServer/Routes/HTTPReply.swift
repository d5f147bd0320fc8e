import FoundationEssentials
import Hummingbird
import NIOCore
import NetRunnerEngine

/// JSON responses and errors as every route writes them.
enum HTTPReply {
    /// A JSON body, keys sorted, slashes unescaped (the shape of the CLI's `--json` lines).
    static func json(
        _ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]
    ) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else {
            return error("The answer could not be encoded as JSON.", status: .internalServerError)
        }
        var headers = headers
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The native API's error: `{"error": true, "error_description": "..."}`, the shape of a
    /// failed results line, with the status that says whose fault it is.
    static func error(_ message: String, status: HTTPResponse.Status, headers: HTTPFields = [:]) -> Response {
        struct Body: Encodable {
            var error = true
            var errorDescription: String
            enum CodingKeys: String, CodingKey {
                case error
                case errorDescription = "error_description"
            }
        }
        return json(Body(errorDescription: message), status: status, headers: headers)
    }

    /// The response for an engine error: 404, 400, 503 with `Retry-After`...
    static func error(_ failure: EngineError) -> Response {
        error("\(failure)", status: .init(code: failure.statusCode), headers: retryHeaders(failure))
    }

    /// `Retry-After: 1` for the errors that pass.
    static func retryHeaders(_ failure: EngineError) -> HTTPFields {
        switch failure {
        case .busy, .modelUnavailable: [.retryAfter: "1"]
        default: [:]
        }
    }
}
