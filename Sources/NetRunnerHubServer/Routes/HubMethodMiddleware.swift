import HTTPTypes
import Hummingbird

/// Another method on a known route is 405 with `Allow`, as JSON like every hub error.
struct HubMethodMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        if let template = HubOpenAPI.template(request.uri.path), let allow = HubOpenAPI.allowed[template],
            !allow.split(separator: ", ").contains(Substring(request.method.rawValue)),
            !(allow.hasPrefix("GET") && request.method == .head)
        {
            var response = HubRoutes.error(
                "\(request.uri.path) takes \(allow), not \(request.method.rawValue).", status: .methodNotAllowed)
            response.headers[.allow] = allow
            return response
        }
        return try await next(request, context)
    }
}
