package import HTTPTypes
package import Hummingbird
package import Logging
package import NetRunnerSupport

extension FailureKind {
    /// The HTTP status of this kind of failure.
    package var status: HTTPResponse.Status {
        switch self {
        case .invalid: .badRequest
        case .unauthorized: .unauthorized
        case .forbidden: .forbidden
        case .notFound: .notFound
        case .conflict: .conflict
        case .tooLarge: .contentTooLarge
        case .unsupportedType: .unsupportedMediaType
        case .unprocessable: .unprocessableContent
        case .unavailable: .serviceUnavailable
        case .failed: .internalServerError
        }
    }

    /// The headers that go with it: `Retry-After`, or for a missing key `WWW-Authenticate` and
    /// `Connection: close` (a body sent without a key is never handled: the connection closes
    /// after the answer, dropping what still comes for at most two seconds).
    package var headers: HTTPFields {
        switch self {
        case .unavailable(let seconds?): [.retryAfter: String(seconds)]
        case .unauthorized: [.wwwAuthenticate: "Bearer", .connection: "close"]
        default: [:]
        }
    }
}

/// Renders the errors handlers throw: a ``KindedFailure`` as its status, headers and message,
/// in KServe's `{"error": "..."}` under `/v2` (as ``MethodMiddleware`` does) and in the servers'
/// own `{"error": true, "error_description"}` elsewhere.
///
/// Handlers throw; none maps errors to responses by hand. Any other error is left to
/// Hummingbird (its own `HTTPResponseError`s), or, when `unexpected` is given, logged and
/// answered 500 with that prefix.
package struct FailureMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The log of unexpected errors.
    package let logger: Logger?
    /// The message's start for an unexpected error (`"The hub failed"`); `nil`: rethrown.
    package let unexpected: String?

    /// Creates the middleware.
    ///
    /// - Parameters:
    ///   - logger: The log of unexpected errors.
    ///   - unexpected: The message's start for an unexpected error; `nil` to rethrow it.
    package init(logger: Logger? = nil, unexpected: String? = nil) {
        self.logger = logger
        self.unexpected = unexpected
    }

    package func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let failure as any KindedFailure {
            return HTTPReply.failure(failure, path: request.uri.path)
        } catch let error as any HTTPResponseError {
            throw error
        } catch {
            guard let unexpected else { throw error }
            logger?.error("\(request.method) \(request.uri.path) failed: \(error)")
            return HTTPReply.error("\(unexpected): \(error)", status: .internalServerError)
        }
    }
}

extension HTTPReply {
    /// The response to a failure on a path.
    ///
    /// - Parameters:
    ///   - failure: The failure.
    ///   - path: The request's path (`/v2/...` answers in KServe's shape).
    /// - Returns: The response.
    package static func failure(_ failure: any KindedFailure, path: String) -> Response {
        let kind = failure.failureKind
        guard path == "/v2" || path.hasPrefix("/v2/") else {
            return HTTPReply.error(failure.description, status: kind.status, headers: kind.headers)
        }
        return HTTPReply.json(["error": failure.description], status: kind.status, headers: kind.headers)
    }
}
