/// Why the hub refused a request, each with its HTTP status.
enum HubError: Error, CustomStringConvertible {
    case badRequest(String)
    case unauthorized(String)
    case forbidden(String)
    case notFound(String)
    case conflict(String)
    case tooLarge(String)
    case invalidModel(String)
    /// The database did not answer in time (503, with Retry-After).
    case unavailable(String)

    var status: Int {
        switch self {
        case .badRequest: 400
        case .unauthorized: 401
        case .forbidden: 403
        case .notFound: 404
        case .conflict: 409
        case .tooLarge: 413
        case .invalidModel: 422
        case .unavailable: 503
        }
    }

    var description: String {
        switch self {
        case .badRequest(let text), .unauthorized(let text), .forbidden(let text), .notFound(let text),
            .conflict(let text), .tooLarge(let text), .invalidModel(let text), .unavailable(let text):
            text
        }
    }
}
