import FoundationEssentials
import HTTPTypes
import Hummingbird
import NetRunnerHTTP
import NetRunnerHub
import NetRunnerSupport

/// Aliases (set, staged rollouts, rollback, history) and resolving a reference, the update
/// check.
extension HubRoutes {
    func addAliasRoutes(to routes: inout RouteList<BasicRequestContext>) {
        routes.get("/v1/models/{name}/aliases/{alias}", .keyed, .operation("getAlias"), handler: getAlias)
        routes.on(.put, "/v1/models/{name}/aliases/{alias}", .keyed, .operation("setAlias"), handler: setAlias)
        routes.post(
            "/v1/models/{name}/aliases/{alias}/rollback", .keyed, .operation("rollback"), handler: rollbackAlias)
        routes.get(
            "/v1/models/{name}/aliases/{alias}/history", .keyed, .operation("aliasHistory"), handler: aliasHistory)
        routes.get("/v1/models/{name}/resolve", .keyed, .operation("resolve"), handler: resolve)
    }

    /// `GET /v1/models/{name}/aliases/{alias}`: its targets, with the gate's flags.
    func getAlias(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        _ = try await authorize(request, .read)
        let (name, alias) = (try Self.name(context), try Self.alias(context))
        guard let found = try await store.alias(alias, of: name, flagged: true) else {
            throw HubError.notFound("\(name) has no alias \"\(alias)\".")
        }
        return HTTPReply.json(found)
    }

    /// `PUT /v1/models/{name}/aliases/{alias}` (publish; forcing past a gate, admin): the body of
    /// ``targets(_:)``.
    func setAlias(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let who = try await authorize(request, .publish)
        let (name, alias) = (try Self.name(context), try Self.alias(context))
        let (targets, force) = try await Self.targets(request)
        if force != nil { _ = try await authorize(request, .admin) }
        try await store.refuseMoveDuringExperiment(alias, of: name)
        do {
            let (found, forced) = try await store.setAlias(alias, of: name, targets: targets, by: who, force: force)
            var moved = found
            if forced { await gates.countForced() }
            // What the hub recorded: forced or not, with the reason it kept.
            moved.forced = forced
            moved.reason = forced ? force : nil
            return HTTPReply.json(moved)
        } catch HubError.gateRefused(let text) {
            await gates.countRefusal()
            throw HubError.gateRefused(text)
        }
    }

    /// `POST /v1/models/{name}/aliases/{alias}/rollback` (publish): back to the targets before
    /// the last move.
    func rollbackAlias(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let who = try await authorize(request, .publish)
        let (name, alias) = (try Self.name(context), try Self.alias(context))
        try await store.refuseMoveDuringExperiment(alias, of: name)
        return HTTPReply.json(try await store.rollback(alias, of: name, by: who))
    }

    /// `GET /v1/models/{name}/aliases/{alias}/history`: every move, the newest last.
    func aliasHistory(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        _ = try await authorize(request, .read)
        let (name, alias) = (try Self.name(context), try Self.alias(context))
        return HTTPReply.json(["history": try await store.history(of: alias, of: name)])
    }

    /// Resolves `?ref=`, the update check.
    ///
    /// The reference (default `latest`) is a version number, an alias (weighted by `?client=`),
    /// or `sha256:<hex>`. A matching `If-None-Match` is 304. Both name the version resolved to
    /// in `Content-Location` (`/v1/models/{name}/versions/{version}`): versions with the same
    /// bytes share a digest, so a 304 alone does not say which one the reference names now.
    func resolve(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        _ = try await authorize(request, .read)
        let name = try Self.name(context)
        let query = request.uri.queryParameters
        let reference = query.get("ref") ?? "latest"
        let client = query.get("client").map { String($0.prefix(200)) }
        let version: HubVersion?
        if reference == "latest" {
            version = try await store.versions(of: name).last
        } else if !reference.isEmpty, reference.utf8.allSatisfy({ (48...57).contains($0) }) {
            version = try await store.version(try Self.checkedVersion(reference, "ref"), of: name)
        } else if reference.hasPrefix("sha256:") {
            version = try await store.version(withDigest: String(reference.dropFirst(7)).lowercased(), of: name)
        } else {
            let alias = try Self.checkedAlias(reference)
            guard let found = try await store.alias(alias, of: name) else {
                throw HubError.notFound("\(name) has no alias \"\(alias)\".")
            }
            version = try await store.version(found.version(for: client), of: name)
        }
        guard let version else {
            throw HubError.notFound(
                "\(name)@\(reference) is not on this hub (GET /v1/models/\(name) lists its versions).")
        }
        // Adoption counts only clients that show a key (anyone could forge anonymous ids, and
        // each would be a row), at most --adoption-limit ids per model.
        if let client, !client.isEmpty, request.headers[.authorization] != nil {
            try await store.recordAdoption(name: name, version: version.version, client: client, limit: adoptionLimit)
        }
        let etag = "\"sha256:\(version.sha256)\""
        // The name is letters, digits, '.', '-' and '_' (checkedName): a path segment as it is.
        let location = "/v1/models/\(name)/versions/\(version.version)"
        if let match = request.headers[.ifNoneMatch],
            match.split(separator: ",").contains(where: {
                String($0.filter { $0 != " " }).replacing("W/", with: "") == etag
            })
        {
            return Response(status: .notModified, headers: [.eTag: etag, .contentLocation: location])
        }
        let resolution = HubResolution(
            name: name, reference: reference, version: version.version,
            sha256: try SHA256Digest(validating: version.sha256), size: version.size,
            format: version.format, download: "/v1/blobs/sha256:\(version.sha256)")
        var response = HTTPReply.json(resolution)
        response.headers[.eTag] = etag
        response.headers[.contentLocation] = location
        response.headers[.cacheControl] = "no-cache"
        return response
    }

    /// `{"version": 7}` or `{"targets": [{"version": 7, "weight": 90}, {"version": 8, "weight": 10}]}`,
    /// with `"force": true, "reason": "..."` to move past the alias's gate; the reason comes back
    /// when forced.
    static func targets(_ request: Request) async throws -> (targets: [HubAliasTarget], force: String?) {
        struct Body: Decodable {
            var version: Int?
            var targets: [HubAliasTarget]?
            var force: Bool?
            var reason: String?
        }
        let data = try await Self.body(of: request, upTo: 64 << 10)
        guard let body = try? JSONDecoder().decode(Body.self, from: data) else {
            throw HubError.badRequest(
                "The body must be JSON: {\"version\": 7}, or {\"targets\": [{\"version\": 7, \"weight\": 90}, "
                    + "{\"version\": 8, \"weight\": 10}]} for a staged rollout.")
        }
        let rule =
            "An alias points to 1 to 10 different versions whose weights are whole percents adding up to 100."
        let targets = body.targets ?? body.version.map { [HubAliasTarget(version: $0)] } ?? []
        guard (1...10).contains(targets.count), Set(targets.map(\.version)).count == targets.count else {
            throw HubError.badRequest(rule)
        }
        do {
            for target in targets {
                _ = try CheckedNumber.integer(target.version, "version", in: 1...maximumVersion)
                _ = try CheckedNumber.integer(target.weight, "weight", in: 1...100)
            }
            // At most 10 weights, each 1 to 100 (checked above): the sum cannot overflow.
            let sum = targets.map(\.weight).reduce(0, +)
            guard sum == 100 else {
                throw HubError.badRequest(
                    "The weights add up to \(sum) (\(targets.map { String($0.weight) }.joined(separator: " + "))), "
                        + "not 100. \(rule)")
            }
        } catch let error as NumberOutOfRange {
            throw HubError.badRequest("\(error) \(rule)")
        }
        guard body.force == true else { return (targets, nil) }
        let reason = (body.reason ?? "").trimmingPrefix(while: \.isWhitespace)
        guard !reason.isEmpty, reason.utf8.count <= 500 else {
            throw HubError.badRequest(
                "A forced move needs a reason of 1 to 500 bytes (\"reason\": \"...\"), kept in the alias's history.")
        }
        return (targets, String(reason))
    }
}
