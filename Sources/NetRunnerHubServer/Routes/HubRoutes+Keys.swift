import FoundationEssentials
import Hummingbird
import NetRunnerHTTP
import NetRunnerHub

/// API keys (admin): create (shown once), list, delete.
extension HubRoutes {
    func addKeyRoutes(to routes: inout RouteList<BasicRequestContext>) {
        routes.post("/v1/keys", .keyed, .operation("createKey"), handler: createKey)
        routes.get("/v1/keys", .keyed, .operation("listKeys"), handler: listKeys)
        routes.on(.delete, "/v1/keys/{name}", .keyed, .operation("deleteKey"), handler: deleteKey)
    }

    /// `POST /v1/keys` with `{"name": "ci", "scope": "read"}`: 201 with the new key, the only
    /// time it is shown (the hub keeps its digest).
    func createKey(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        _ = try await authorize(request, .admin)
        struct Body: Decodable {
            var name: String
            var scope: HubScope
        }
        let data = try await Self.body(of: request, upTo: 64 << 10)
        guard let body = try? JSONDecoder().decode(Body.self, from: data) else {
            throw HubError.badRequest(
                "The body must be JSON: {\"name\": \"ci\", \"scope\": \"read\" | \"publish\" | \"admin\"}.")
        }
        _ = try Self.checkedName(body.name, what: "key name")
        let key = HubKeys.newKey()
        try await store.addKey(digest: HubKeys.digest(of: key), name: body.name, scope: body.scope)
        return HTTPReply.json(["key": key, "name": body.name, "scope": body.scope.rawValue], status: .created)
    }

    /// `GET /v1/keys`: each key's name, scope and creation date (never the key).
    func listKeys(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        _ = try await authorize(request, .admin)
        let keys = try await store.keys().map {
            ["name": $0.name, "scope": $0.scope, "created_at": $0.createdAt]
        }
        return HTTPReply.json(["keys": keys])
    }

    /// `DELETE /v1/keys/{name}`.
    func deleteKey(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        _ = try await authorize(request, .admin)
        let name = try context.parameters.require("name")
        guard try await store.deleteKey(named: name) else { throw HubError.notFound("No key named \(name).") }
        return HTTPReply.json(["deleted": name])
    }
}
