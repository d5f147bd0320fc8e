import Hummingbird
import NetRunner
import NetRunnerEngine
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

    /// A model unloaded through the repository API: 503, and the request that serves it again.
    static func unloaded(id: String) -> RouteFailure {
        RouteFailure(.unavailable(retryAfter: 1), "Model \"\(id)\" is not available: \(unloadedReason(id))")
    }

    /// Why an unloaded model does not answer, and what serves it again.
    static func unloadedReason(_ id: String) -> String {
        "it is unloaded; POST /v2/repository/models/\(id)/load serves it again."
    }
}

/// Gives the engine's ``EngineError/modelUnloaded(id:)`` the server's advice, the route that
/// loads the model again (``RouteFailure/unloaded(id:)``); inside ``FailureMiddleware``, which
/// renders it.
struct UnloadedModelMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch EngineError.modelUnloaded(let id) {
            throw RouteFailure.unloaded(id: id)
        }
    }
}
