import FoundationEssentials
package import HTTPTypes
package import Hummingbird
import NIOCore
import NetRunnerSupport

/// A server's routes, each declared once (``Route``), and what is derived from them: the
/// router's handlers, the 405 table (``RouteTable``), the routes open without a key, and the
/// OpenAPI document's paths.
///
///     var routes = RouteList<BasicRequestContext>()
///     routes.get("/v1/models", .open, .operation("listModels")) { request, context in ... }
///     routes.register(on: router)
///     router.add(middleware: MethodMiddleware(routes: routes.table))
package struct RouteList<Context: RequestContext>: Sendable {
    /// The routes, in the order declared.
    package private(set) var routes: [Route<Context>] = []

    /// An empty list.
    package init() {}

    /// Adds a route.
    ///
    /// - Parameter route: The route; a second route of the same method and template is a
    ///   programming error.
    package mutating func add(_ route: Route<Context>) {
        precondition(
            !routes.contains { $0.method == route.method && $0.template == route.template },
            "\(route.method) \(route.template) is declared twice")
        routes.append(route)
    }

    /// Adds every route of another list.
    ///
    /// - Parameter other: The routes.
    package mutating func add(_ other: RouteList<Context>) {
        for route in other.routes { add(route) }
    }

    /// Adds a route of any method.
    package mutating func on(
        _ method: HTTPRequest.Method, _ template: String, _ access: Route<Context>.Access,
        _ documentation: Route<Context>.Documentation,
        handler: @escaping @Sendable (Request, Context) async throws -> Response
    ) {
        add(Route(method, template, access, documentation, handler: handler))
    }

    /// Adds `GET /openapi.json`, open, answering the OpenAPI document of the routes declared
    /// so far (``openAPIDocument(base:operations:)``).
    ///
    /// - Parameters:
    ///   - base: The document without its paths, as JSON.
    ///   - operations: Each operation by its `operationId`, as a JSON object.
    /// - Throws: The errors of ``openAPIDocument(base:operations:)``.
    package mutating func addOpenAPIDocument(base: String, operations: String) throws {
        let document = ByteBuffer(string: try openAPIDocument(base: base, operations: operations))
        get("/openapi.json", .open, .elsewhere("the document itself")) { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: document))
        }
    }

    /// Adds a `GET` route.
    package mutating func get(
        _ template: String, _ access: Route<Context>.Access, _ documentation: Route<Context>.Documentation,
        handler: @escaping @Sendable (Request, Context) async throws -> Response
    ) {
        add(Route(.get, template, access, documentation, handler: handler))
    }

    /// Adds a `POST` route.
    package mutating func post(
        _ template: String, _ access: Route<Context>.Access, _ documentation: Route<Context>.Documentation,
        handler: @escaping @Sendable (Request, Context) async throws -> Response
    ) {
        add(Route(.post, template, access, documentation, handler: handler))
    }

    /// Registers every handler on a router.
    ///
    /// - Parameter router: The router.
    package func register(on router: Router<Context>) {
        for route in routes {
            guard let handler = route.handler else { continue }
            router.on(RouterPath(route.template), method: route.method) { request, context in
                try await handler(request, context)
            }
        }
    }

    /// Each template with the methods it takes, for 405 with `Allow`.
    package var table: RouteTable {
        let order: [HTTPRequest.Method] = [.get, .head, .post, .put, .patch, .delete]
        var methods: [String: [HTTPRequest.Method]] = [:]
        for route in routes { methods[route.template, default: []].append(route.method) }
        return RouteTable(
            methods.mapValues { taken in
                taken.sorted { (order.firstIndex(of: $0) ?? order.count) < (order.firstIndex(of: $1) ?? order.count) }
                    .map(\.rawValue).joined(separator: ", ")
            })
    }

    /// The templates anyone may `GET` (or `HEAD`) on a server with keys.
    package var openTemplates: Set<String> {
        Set(routes.filter { $0.access == .open && ($0.method == .get || $0.method == .head) }.map(\.template))
    }

    /// The OpenAPI document: `base` (everything but `paths`) with the paths of the routes
    /// described by an operation, each operation taken from `operations` by its id.
    ///
    /// - Parameters:
    ///   - base: The document without its paths, as JSON.
    ///   - operations: Each operation by its `operationId`, as a JSON object.
    /// - Returns: The document's JSON.
    /// - Throws: ``UndescribedOperation`` when a route names an operation `operations` lacks,
    ///   or `operations` holds one no route names; the JSON's errors.
    package func openAPIDocument(base: String, operations: String) throws -> String {
        guard case .object(var document) = try JSONValue.parse(Data(base.utf8), source: "the OpenAPI base"),
            case .object(let described) = try JSONValue.parse(Data(operations.utf8), source: "the operations")
        else { throw UndescribedOperation(id: "(not JSON objects)") }
        var paths: [String: JSONValue] = [:]
        for route in routes {
            guard case .operation(let id) = route.documentation else { continue }
            guard case .object(var operation) = described[id] else { throw UndescribedOperation(id: id) }
            operation["operationId"] = .string(id)
            var item: [String: JSONValue] = [:]
            if case .object(let existing) = paths[route.template] { item = existing }
            item[route.method.rawValue.lowercased()] = .object(operation)
            paths[route.template] = .object(item)
        }
        if let unused = described.keys.sorted().first(where: { !operationIDs.contains($0) }) {
            throw UndescribedOperation(id: unused, isUnused: true)
        }
        document["paths"] = .object(paths)
        return String(decoding: try JSONCoding.encoder().encode(JSONValue.object(document)), as: UTF8.self)
    }

    /// The operation ids the routes name.
    package var operationIDs: [String] {
        routes.compactMap {
            guard case .operation(let id) = $0.documentation else { return nil }
            return id
        }
    }
}

/// A route names an OpenAPI operation that is not written, or an operation is written that no
/// route answers.
package struct UndescribedOperation: Error, CustomStringConvertible {
    /// The operation's id.
    package let id: String
    /// Whether the operation is written but no route names it.
    package var isUnused = false
    package var description: String {
        isUnused ? "No route answers the OpenAPI operation \"\(id)\"." : "No OpenAPI operation \"\(id)\" is written."
    }
}
