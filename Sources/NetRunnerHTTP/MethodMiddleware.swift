package import Hummingbird

/// Answers 405 Method Not Allowed, with `Allow`, for a known route asked with another method,
/// and 404 with a JSON body for a route the server does not have.
///
/// The router alone answers 405 as 404, as if the route did not exist, and its 404 has an empty
/// body, which Triton's client reports as "client received an empty response": under `/v2` the
/// 404 is KServe's `{"error": "..."}`, elsewhere the server's own error JSON. `HEAD` goes where
/// `GET` does.
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
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound && routes.methods(for: request.uri.path) == nil {
            let path = String(request.uri.path.prefix(200))
            let message = "No route \(path) here; GET /openapi.json lists the routes."
            guard path == "/v2" || path.hasPrefix("/v2/") else { return HTTPReply.error(message, status: .notFound) }
            return HTTPReply.json(["error": message], status: .notFound)
        }
    }
}
