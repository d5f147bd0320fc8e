import NetRunnerSupport

/// Why the hub refused a request; each says what kind of failure it is, and
/// `FailureMiddleware` picks the status (a missing key 401 with `WWW-Authenticate`, a database
/// that did not answer 503 with `Retry-After`).
enum HubError: KindedFailure {
    case badRequest(String)
    case unauthorized(String)
    case forbidden(String)
    case notFound(String)
    case conflict(String)
    /// A gated alias asked to point at versions that have not passed its gate (409).
    case gateRefused(String)
    case tooLarge(String)
    case invalidModel(String)
    /// The database did not answer in time (try again in a second).
    case unavailable(String)

    var failureKind: FailureKind {
        switch self {
        case .badRequest: .invalid
        case .unauthorized: .unauthorized
        case .forbidden: .forbidden
        case .notFound: .notFound
        case .conflict, .gateRefused: .conflict
        case .tooLarge: .tooLarge
        case .invalidModel: .unprocessable
        case .unavailable: .unavailable(retryAfter: 1)
        }
    }

    var description: String {
        switch self {
        case .badRequest(let text), .unauthorized(let text), .forbidden(let text), .notFound(let text),
            .conflict(let text), .gateRefused(let text), .tooLarge(let text), .invalidModel(let text),
            .unavailable(let text):
            text
        }
    }
}
