import Hummingbird
import NetRunnerHTTP
import NetRunnerHub

/// Models and their versions: list, show, publish, delete, adoption.
extension HubRoutes {
    func addModelRoutes(to routes: inout RouteList<BasicRequestContext>) {
        routes.get("/v1/models", .keyed, .operation("listModels"), handler: listModels)
        routes.get("/v1/models/{name}", .keyed, .operation("getModel"), handler: getModel)
        routes.post("/v1/models/{name}/versions", .keyed, .operation("publish"), handler: publishVersion)
        routes.get("/v1/models/{name}/versions/{version}", .keyed, .operation("getVersion"), handler: getVersion)
        routes.on(
            .delete, "/v1/models/{name}/versions/{version}", .keyed, .operation("deleteVersion"),
            handler: deleteVersion)
        routes.get("/v1/models/{name}/adoption", .keyed, .operation("adoption"), handler: adoption)
    }

    /// `GET /v1/models[?q=WORDS]`: the models (matching the words).
    func listModels(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        _ = try await authorize(request, .read)
        let models = try await store.models(search: request.uri.queryParameters.get("q"))
        return HTTPReply.json(["models": models])
    }

    /// `GET /v1/models/{name}`: a model, its versions and aliases.
    func getModel(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        _ = try await authorize(request, .read)
        let name = try Self.name(context)
        guard let model = try await store.model(name) else {
            throw HubError.notFound("No model \"\(name)\" on this hub (GET /v1/models lists them).")
        }
        return HTTPReply.json(model)
    }

    /// `POST /v1/models/{name}/versions[?alias=A][&allow_task_change=true]`: an upload
    /// (``publish(_:name:alias:allowTaskChange:by:)``), 201 with the new version.
    func publishVersion(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let who = try await authorize(request, .publish)
        let name = try Self.name(context)
        let query = request.uri.queryParameters
        let alias = try query.get("alias").map { try Self.checkedAlias($0) }
        let allowTaskChange = try Self.flag(query.get("allow_task_change"), "allow_task_change")
        let version = try await publish(request, name: name, alias: alias, allowTaskChange: allowTaskChange, by: who)
        return HTTPReply.json(version, status: .created)
    }

    /// `GET /v1/models/{name}/versions/{version}`.
    func getVersion(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        _ = try await authorize(request, .read)
        let (name, number) = (try Self.name(context), try Self.versionNumber(context))
        guard let version = try await store.version(number, of: name) else {
            throw HubError.notFound("\(name) has no version \(number).")
        }
        return HTTPReply.json(version)
    }

    /// `DELETE /v1/models/{name}/versions/{version}` (admin).
    func deleteVersion(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let who = try await authorize(request, .admin)
        let (name, number) = (try Self.name(context), try Self.versionNumber(context))
        guard try await store.version(number, of: name) != nil else {
            throw HubError.notFound("\(name) has no version \(number).")
        }
        try await store.delete(version: number, of: name, by: who)
        return HTTPReply.json(["deleted": "\(name)@\(number)"])
    }

    /// `GET /v1/models/{name}/adoption`: how many clients (with a key) resolved to each version.
    func adoption(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        _ = try await authorize(request, .read)
        struct Count: Encodable {
            var version: Int
            var clients: Int
        }
        let counts = try await store.adoption(of: try Self.name(context))
        return HTTPReply.json(["versions": counts.map { Count(version: $0.version, clients: $0.clients) }])
    }
}
