import HTTPTypes
import Hummingbird
import NetRunnerHTTP
import NetRunnerSupport

/// The hub against web pages: a request carrying a foreign `Origin` gets 403 and, on loopback,
/// one addressed at a name the hub does not answer gets 421 (DNS rebinding), before any work
/// (``BrowserGuard``; the hub allows no cross-origin pages: its clients send no `Origin`).
struct HubBrowserMiddleware<Context: RequestContext>: RouterMiddleware {
    let browsers: BrowserGuard

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        switch browsers.refusal(origin: request.headers[.origin], host: request.head.authority) {
        case .foreignHost(let name)?:
            return HTTPReply.error(
                BrowserGuard.Refusal.foreignHost(name).description.replacing("start it", with: "start the hub"),
                status: .misdirectedRequest)
        case .foreignOrigin(let origin)?:
            return HTTPReply.error(
                "Requests from pages of \(origin) are refused: the hub answers programs, not web pages.",
                status: .forbidden)
        case nil:
            return try await next(request, context)
        }
    }
}
