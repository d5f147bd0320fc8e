package import NetRunnerSupport

/// Why the engine did not answer a request; each says what kind of failure it is
/// (``failureKind``), and a server picks its status from that.
package enum EngineError: Error, Equatable, Sendable {
    /// No model has this id.
    case unknownModel(id: String, known: [String])
    /// The model exists but failed to load, or is still loading.
    case modelUnavailable(id: String, reason: String)
    /// The model was unloaded on request; loading it again serves it (a server says how: the
    /// engine knows no routes).
    case modelUnloaded(id: String)
    /// A model with this id is already served (an import of the same id).
    case modelExists(id: String)
    /// The queue is full: try again shortly.
    case busy(queued: Int)
    /// The engine is shutting down.
    case shuttingDown
    /// The request is not something the model can take (bad image, wrong tensor size...).
    case badInput(String)
    /// The model failed while running (the runtime's error).
    case failed(String)
}

extension EngineError: KindedFailure {
    /// The kind of failure: a busy queue and a model still loading pass (try again in a second).
    package var failureKind: FailureKind {
        switch self {
        case .unknownModel: .notFound
        case .modelUnavailable, .modelUnloaded, .busy: .unavailable(retryAfter: 1)
        case .shuttingDown: .unavailable(retryAfter: nil)
        case .badInput: .invalid
        case .modelExists: .conflict
        case .failed: .failed
        }
    }
}

extension EngineError: CustomStringConvertible {
    /// A message a person can act on.
    package var description: String {
        switch self {
        case .unknownModel(let id, let known):
            "No model \"\(id)\" here; the models are: \(known.joined(separator: ", "))."
        case .modelUnavailable(let id, let reason):
            "Model \"\(id)\" is not available: \(reason)"
        case .modelUnloaded(let id):
            "Model \"\(id)\" is not available: it is unloaded; load it again to serve it."
        case .modelExists(let id):
            "A model with id \"\(id)\" is already served; import it under another id (its model.json \"id\")."
        case .busy(let queued):
            "The server is busy (\(queued) requests queued); retry after a second."
        case .shuttingDown:
            "The server is shutting down."
        case .badInput(let reason):
            reason
        case .failed(let reason):
            "The model failed: \(reason)"
        }
    }
}
