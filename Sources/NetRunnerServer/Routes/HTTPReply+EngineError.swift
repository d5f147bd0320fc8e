import Hummingbird
import NetRunnerEngine
import NetRunnerHTTP

extension HTTPReply {
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
