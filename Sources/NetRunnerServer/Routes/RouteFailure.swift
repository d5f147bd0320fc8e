import NetRunner
import NetRunnerSupport

/// A request a route refuses itself: what kind of failure, and the message.
///
/// The engine's refusals are ``EngineError``. Handlers throw either; ``FailureMiddleware`` writes
/// the response.
struct RouteFailure: KindedFailure {
    var failureKind: FailureKind
    var description: String

    init(_ kind: FailureKind, _ message: String) {
        failureKind = kind
        description = message
    }

    /// A model asked for a task it does not do (a detector's `/classify`): 404, the model
    /// exists but not this resource of it; the message names the route of its own task.
    static func wrongTask(id: String, kind: ImageTask.Kind, asked: ImageTask.Kind) -> RouteFailure {
        // The definition's own article: "an image embedder", "a classifier".
        func noun(_ kind: ImageTask.Kind) -> String {
            VisionTaskRegistry.definition(for: kind)?.modelNameWithArticle ?? "a model of task \(kind.rawValue)"
        }
        let verb = VisionTaskRegistry.definition(for: kind)?.verb ?? kind.rawValue
        return RouteFailure(
            .notFound,
            "Model \"\(id)\" is \(noun(kind)), not \(noun(asked)): POST to /v1/models/\(id)/\(verb) instead.")
    }
}
