/// Why the engine did not answer a request, each with the HTTP status a client gets.
public enum EngineError: Error, Equatable, Sendable {
    /// No model has this id.
    case unknownModel(id: String, known: [String])
    /// The model exists but failed to load, or is still loading.
    case modelUnavailable(id: String, reason: String)
    /// A model with this id is already served (an import of the same id).
    case modelExists(id: String)
    /// The model runs another task (a detector asked to classify, say).
    case wrongTask(id: String, kind: String, asked: String)
    /// The queue is full: try again shortly.
    case busy(queued: Int)
    /// The engine is shutting down.
    case shuttingDown
    /// The request is not something the model can take (bad image, wrong tensor size...).
    case badInput(String)
    /// The model failed while running (the runtime's error).
    case failed(String)

    /// The HTTP status code for this error.
    public var statusCode: Int {
        switch self {
        case .unknownModel: 404
        case .modelUnavailable, .busy, .shuttingDown: 503
        // The model exists, but not this resource of it: /classify of a detector.
        case .wrongTask: 404
        case .badInput: 400
        case .modelExists: 409
        case .failed: 500
        }
    }
}

extension EngineError: CustomStringConvertible {
    /// A message a person can act on.
    public var description: String {
        switch self {
        case .unknownModel(let id, let known):
            "No model \"\(id)\" here; the models are: \(known.joined(separator: ", ")) (GET /v1/models lists them)."
        case .modelUnavailable(let id, let reason):
            "Model \"\(id)\" is not available: \(reason)"
        case .wrongTask(let id, let kind, let asked):
            "Model \"\(id)\" is a\(kind == "detection" ? " detector" : " classifier"), not a"
                + "\(asked == "detection" ? " detector" : " classifier"): POST to /v1/models/\(id)/"
                + "\(kind == "detection" ? "detect" : "classify") instead."
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
