import HTTPTypes
import Hummingbird
import NetRunnerHTTP
import NetRunnerSupport

/// Who may call the server, decided once for the router and the live socket.
///
/// - API keys (`Authorization: Bearer KEY`; `?key=KEY` only on the live WebSocket, which
///   browsers cannot give headers) for every route but the few open ones: health, metadata,
///   the model list and the web page itself (probes and the page's first load need no key; the
///   page sends the key it was opened with, `/#key=...`). Access is decided on the route the
///   router matched, never on the raw path (`//v1/albums` routes as `/v1/albums`), and a
///   request that matches no route needs the key too.
/// - Cross-site requests and DNS rebinding (``BrowserGuard``): a foreign `Origin` or, on
///   loopback, a foreign `Host` is refused before any work.
struct ServerAccess: Sendable {
    /// Accepted keys; empty: no key needed.
    let keys: Set<String>
    /// The `Origin` and `Host` checks.
    let browsers: BrowserGuard

    /// Whether a request to a matched route (`nil`: none) needs a key.
    ///
    /// - Parameters:
    ///   - method: The request's method.
    ///   - route: The template the router matched.
    ///   - open: The templates anyone may `GET` (``RouteList/openTemplates``).
    /// - Returns: Whether the request must carry a key.
    func needsKey(method: HTTPRequest.Method, route: String?, open: Set<String>) -> Bool {
        guard !keys.isEmpty else { return false }
        guard let route, method == .get || method == .head else { return true }
        return !open.contains(route)
    }

    /// Whether the request's `Authorization: Bearer` header holds an accepted key.
    func hasKey(_ headers: HTTPFields) -> Bool {
        guard let header = headers[.authorization], header.hasPrefix("Bearer ") else { return false }
        let key = String(header.dropFirst(7))
        return !key.isEmpty && keys.contains(key)
    }

    /// The 403 (or 421 for a name this server does not answer) of a refused browser request, or
    /// `nil`.
    func browserRefusal(_ request: HTTPRequest) -> Response? {
        guard let refusal = browsers.refusal(origin: request.headerFields[.origin], host: request.authority) else {
            return nil
        }
        switch refusal {
        case .foreignHost: return HTTPReply.error(refusal.description, status: .misdirectedRequest)
        case .foreignOrigin: return HTTPReply.error(refusal.description, status: .forbidden)
        }
    }
}

/// Applies ``ServerAccess`` to every routed request, and answers CORS for the allowed origins.
struct AccessMiddleware<Context: RequestContext>: RouterMiddleware {
    let access: ServerAccess
    /// The templates anyone may `GET` (``RouteList/openTemplates``).
    let open: Set<String>

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        if let refused = access.browserRefusal(request.head) { return refused }
        let origin = request.headers[.origin]
        let allowed = origin.map { access.browsers.allowsCrossOrigin($0) } ?? false
        if request.method == .options, allowed {
            return Response(status: .noContent, headers: corsHeaders(origin, preflight: true))
        }
        // The route the router matched (`/v1/albums/{album}`), `nil` when none did.
        if access.needsKey(method: request.method, route: context.endpointPath, open: open),
            !access.hasKey(request.headers)
        {
            // Closed once answered: a body sent without a key is never handled (a lingering close).
            var headers: HTTPFields = [.wwwAuthenticate: "Bearer", .connection: "close"]
            if allowed { headers.append(contentsOf: corsHeaders(origin, preflight: false)) }
            return HTTPReply.error(
                "This server needs an API key: send Authorization: Bearer KEY.", status: .unauthorized,
                headers: headers)
        }
        var response = try await next(request, context)
        if allowed { response.headers.append(contentsOf: corsHeaders(origin, preflight: false)) }
        return response
    }

    private func corsHeaders(_ origin: String?, preflight: Bool) -> HTTPFields {
        var headers: HTTPFields = [.accessControlAllowOrigin: origin ?? "*", .vary: "Origin"]
        if preflight {
            headers[.accessControlAllowMethods] = "GET, POST, OPTIONS"
            headers[.accessControlAllowHeaders] = "Authorization, Content-Type, Inference-Header-Content-Length"
            headers[.accessControlMaxAge] = "600"
        }
        headers[.accessControlExposeHeaders] =
            "Server-Timing, Retry-After, Inference-Header-Content-Length, Image-Width, Image-Height"
        return headers
    }
}
