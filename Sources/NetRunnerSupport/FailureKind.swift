/// What kind of failure an error is, so that whoever reports it can say so in its own terms: a
/// server picks its status from it (`NetRunnerHTTP`), without the layer that failed knowing
/// HTTP.
package enum FailureKind: Sendable, Equatable {
    /// The request is not something that can be done (a bad image, a bad parameter): 400.
    case invalid
    /// A key is needed, or the one given is not known: 401.
    case unauthorized
    /// The key given may not do this: 403.
    case forbidden
    /// What was asked for does not exist: 404.
    case notFound
    /// It exists already: 409.
    case conflict
    /// The request is larger than the limit: 413.
    case tooLarge
    /// The body is of a type not taken here: 415.
    case unsupportedType
    /// The request is understood but its content is refused (a model that is no model): 422.
    case unprocessable
    /// Not now: try again (after `retryAfter` seconds, if given): 503.
    case unavailable(retryAfter: Int?)
    /// Something failed that the caller cannot fix: 500.
    case failed
}

/// An error that says what kind of failure it is; its description is the message a person
/// reads.
package protocol KindedFailure: Error, CustomStringConvertible {
    /// The kind of failure.
    var failureKind: FailureKind { get }
}
