package import Hummingbird

/// Answers 405 Method Not Allowed, with `Allow`, for a known route asked with another method.
///
/// The router alone answers 404, as if the route did not exist. `HEAD` goes where `GET` does.
package struct MethodMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The server's routes.
    package let routes: RouteTable

    /// Creates the middleware.
    ///
    /// - Parameter routes: The server's routes.
    package init(routes: RouteTable) {
        self.routes = routes
    }

    package func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        if let allow = routes.methods(for: request.uri.path),
            !allow.split(separator: ", ").contains(Substring(request.method.rawValue)),
            !(allow.hasPrefix("GET") && request.method == .head)
        {
            return HTTPReply.error(
                "\(request.uri.path) takes \(allow), not \(request.method.rawValue).", status: .methodNotAllowed,
                headers: [.allow: allow])
        }
        return try await next(request, context)
    }
}
