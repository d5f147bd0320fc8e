import FoundationEssentials
package import HTTPTypes
package import Hummingbird
import NIOCore
import NetRunnerSupport

/// JSON responses and errors as both servers write them.
package enum HTTPReply {
    /// A JSON body.
    ///
    /// - Parameters:
    ///   - value: The body.
    ///   - status: The status.
    ///   - headers: More headers (`Content-Type` is set).
    /// - Returns: The response; a 500 naming the problem when the value cannot be encoded.
    package static func json(
        _ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]
    ) -> Response {
        guard var data = try? JSONCoding.encoder().encode(value) else {
            return error("The answer could not be encoded as JSON.", status: .internalServerError)
        }
        // Ended by a newline, as a text answer is: `curl` output then ends its line.
        data.append(UInt8(ascii: "\n"))
        var headers = headers
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// An error: `{"error": true, "error_description": "..."}` (the shape of a failed results
    /// line), with the status that says whose fault it is.
    ///
    /// - Parameters:
    ///   - message: What went wrong and what to do.
    ///   - status: The status.
    ///   - headers: More headers (`Retry-After`, `Allow`...).
    /// - Returns: The response.
    package static func error(_ message: String, status: HTTPResponse.Status, headers: HTTPFields = [:]) -> Response {
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
}
