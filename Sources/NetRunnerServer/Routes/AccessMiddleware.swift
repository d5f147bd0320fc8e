import HTTPTypes
import Hummingbird

/// Who may call the server: API keys (`Authorization: Bearer KEY`, or `?key=KEY` on the live
/// WebSocket, which browsers cannot give headers) for everything that runs a model, and a CORS
/// allow-list for pages served from other origins.
///
/// Health, metadata and the web page itself stay open: probes and the page's first load need
/// no key (the page sends the key it was opened with, `/#key=...`).
struct AccessMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Accepted keys; empty: no key needed.
    let keys: Set<String>
    /// Origins allowed to call from a browser page (`https://app.example.com`); `*` allows any.
    let origins: Set<String>

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let origin = request.headers[.origin]
        let allowed = origin.map { origins.contains("*") || origins.contains($0) } ?? false
        if request.method == .options, allowed {
            return Response(status: .noContent, headers: corsHeaders(origin, preflight: true))
        }
        if !keys.isEmpty, Self.needsKey(request), !hasKey(request) {
            var headers: HTTPFields = [.wwwAuthenticate: "Bearer"]
            if allowed { headers.append(contentsOf: corsHeaders(origin, preflight: false)) }
            return HTTPReply.error(
                "This server needs an API key: send Authorization: Bearer KEY.", status: .unauthorized,
                headers: headers)
        }
        var response = try await next(request, context)
        if allowed { response.headers.append(contentsOf: corsHeaders(origin, preflight: false)) }
        return response
    }

    /// Whether a request runs a model or reads the server's files: POSTs, the live socket,
    /// albums (their photos), album runs and imports.
    static func needsKey(_ request: Request) -> Bool {
        let path = request.uri.path
        return request.method == .post || path == "/v1/live" || path.hasPrefix("/v1/albums")
            || path.hasPrefix("/v1/runs") || path.hasPrefix("/v1/imports") || path.hasPrefix("/v1/streams")
    }

    private func hasKey(_ request: Request) -> Bool {
        if let header = request.headers[.authorization], header.hasPrefix("Bearer ") {
            return keys.contains(String(header.dropFirst(7)))
        }
        if let key = request.uri.queryParameters.get("key") { return keys.contains(key) }
        return false
    }

    private func corsHeaders(_ origin: String?, preflight: Bool) -> HTTPFields {
        var headers: HTTPFields = [.accessControlAllowOrigin: origin ?? "*", .vary: "Origin"]
        if preflight {
            headers[.accessControlAllowMethods] = "GET, POST, OPTIONS"
            headers[.accessControlAllowHeaders] = "Authorization, Content-Type, Inference-Header-Content-Length"
            headers[.accessControlMaxAge] = "600"
        }
        headers[.accessControlExposeHeaders] = "Server-Timing, Retry-After, Inference-Header-Content-Length"
        return headers
    }
}
