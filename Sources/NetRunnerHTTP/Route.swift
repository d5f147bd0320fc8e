package import HTTPTypes
package import Hummingbird

/// One route of a server, declared once.
///
/// Its method, its template, who may call it, where it is described, and its handler. A server's ``RouteList`` derives everything else from its
/// routes: the router, the 405 table, the access rule, the metrics label (the template) and the
/// OpenAPI document's paths.
package struct Route<Context: RequestContext>: Sendable {
    /// Who may call a route on a server that has API keys.
    package enum Access: Sendable, Equatable {
        /// Anyone (health, metadata, the web page's files).
        case open
        /// Callers with a key (and, on the hub, the scope the handler asks for).
        case keyed
    }

    /// Where a route is described to clients.
    package enum Documentation: Sendable, Equatable {
        /// An operation of the server's OpenAPI document, by its `operationId`.
        case operation(String)
        /// Not in the OpenAPI document, and why: another specification describes it (KServe
        /// v2's), or it is a file of the web page.
        case elsewhere(String)
    }

    /// The method.
    package let method: HTTPRequest.Method
    /// The template: a path with `{name}` parameters, one segment each.
    package let template: String
    /// Who may call it.
    package let access: Access
    /// Where it is described.
    package let documentation: Documentation
    /// The handler; `nil` for a route answered before the router (the WebSocket upgrade of the
    /// live route), which is still in the 405 table and the access rule.
    package let handler: (@Sendable (Request, Context) async throws -> Response)?

    /// Creates a route.
    ///
    /// - Parameters:
    ///   - method: The method.
    ///   - template: The path template.
    ///   - access: Who may call it.
    ///   - documentation: Where it is described.
    ///   - handler: The handler, or `nil` when something before the router answers it.
    package init(
        _ method: HTTPRequest.Method, _ template: String, _ access: Access, _ documentation: Documentation,
        handler: (@Sendable (Request, Context) async throws -> Response)?
    ) {
        self.method = method
        self.template = template
        self.access = access
        self.documentation = documentation
        self.handler = handler
    }
}
