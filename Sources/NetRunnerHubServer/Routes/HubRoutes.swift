import FoundationEssentials
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NetRunner
import NetRunnerHTTP
import NetRunnerHub
import NetRunnerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The hub's HTTP API (`/v1`): models, versions, aliases with history and rollback, resolve
/// (the update check: strong ETag, 304), blobs (ETag, Range, If-Range), keys, gates.
struct HubRoutes: Sendable {
    let store: HubStore
    let blobs: any BlobStore
    let dataFolder: String
    let maximumUploadBytes: Int
    let anonymousRead: Bool
    /// The most client ids whose adoption is kept per model (`--adoption-limit`).
    let adoptionLimit: Int
    /// The gates' evaluations.
    let gates: GateRunner
    /// The folder of the test bundles gates name (`--test-bundles`), or `nil`.
    let testBundles: String?
    let logger: Logger

    /// The largest version number (PostgreSQL's `INTEGER` is 32 bits).
    static let maximumVersion = Int(Int32.max)

    /// The routes, in groups of named handlers: the page, health and metrics here; models and
    /// versions (``addModelRoutes(to:)``), aliases and resolving (``addAliasRoutes(to:)``),
    /// blobs (``addBlobRoutes(to:)``), keys (``addKeyRoutes(to:)``) and gates
    /// (``addGateRoutes(to:)``), experiments and events (``addExperimentRoutes(to:)``) in their files.
    ///
    /// The access each declares is what its handler's `authorize` asks: open, or a
    /// key of the handler's scope (reading needs none with `--anonymous-read`, the default).
    var routes: RouteList<BasicRequestContext> {
        var routes = RouteList<BasicRequestContext>()
        let page = Route<BasicRequestContext>.Documentation.elsewhere("the hub's web page")
        routes.get("/", .open, page) { _, _ in HubPage.response() }
        routes.on(.head, "/", .open, page) { _, _ in HubPage.response() }
        routes.get("/v1/health", .open, .operation("health"), handler: health)
        routes.get("/metrics", .open, .operation("metrics"), handler: metrics)
        addModelRoutes(to: &routes)
        addAliasRoutes(to: &routes)
        addBlobRoutes(to: &routes)
        addKeyRoutes(to: &routes)
        addGateRoutes(to: &routes)
        addExperimentRoutes(to: &routes)
        return routes
    }

    /// `GET /v1/health`: the hub answers, and which build it is.
    func health(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        HTTPReply.json(["status": "ok", "version": BuildVersion.description])
    }

    /// `GET /metrics`: the gates' counts and the experiments' gauges, in Prometheus's text format.
    func metrics(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let experiments = try await store.experimentMetricsText()
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
        return Response(
            status: .ok, headers: headers,
            body: .init(byteBuffer: ByteBuffer(string: await gates.metricsText() + experiments)))
    }

    // MARK: Access

    /// The caller's name, if their key allows `scope` (or anonymous reading is on).
    func authorize(_ request: Request, _ scope: HubScope) async throws -> String {
        guard let header = request.headers[.authorization] else {
            if scope == .read && anonymousRead { return "anonymous" }
            throw HubError.unauthorized(
                "This needs a hub key with the \(scope.rawValue) scope: send Authorization: Bearer KEY "
                    + "(--token or NETRUNNER_HUB_TOKEN).")
        }
        guard header.hasPrefix("Bearer "),
            let found = try await store.key(digest: HubKeys.digest(of: String(header.dropFirst(7))))
        else {
            throw HubError.unauthorized("This hub key is not known here.")
        }
        guard found.scope >= scope else {
            throw HubError.forbidden(
                "The key \"\(found.name)\" has the \(found.scope.rawValue) scope; this needs \(scope.rawValue).")
        }
        return found.name
    }

    // MARK: Helpers

    /// The route's `{name}`, a model name (``checkedName(_:what:)``).
    static func name(_ context: BasicRequestContext) throws -> String {
        try checkedName(context.parameters.require("name"), what: "model name")
    }

    /// The route's `{alias}` (``checkedAlias(_:)``).
    static func alias(_ context: BasicRequestContext) throws -> String {
        try checkedAlias(context.parameters.require("alias"))
    }

    /// A name as the hub keeps it: 1 to 64 of letters, digits, `.`, `-`, `_`, not starting with
    /// `.` or `-`.
    static func checkedName(_ name: String, what: String) throws -> String {
        let allowed = name.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0))
        }
        guard (1...64).contains(name.utf8.count), allowed, !name.hasPrefix("."), !name.hasPrefix("-") else {
            throw HubError.badRequest(
                "\"\(name.prefix(80))\" is not a usable \(what): 1 to 64 letters, digits, '.', '-' or '_', "
                    + "not starting with '.' or '-'.")
        }
        return name
    }

    /// An alias: a name that is not a number (numbers are versions) and not `latest`.
    static func checkedAlias(_ alias: String) throws -> String {
        _ = try checkedName(alias, what: "alias")
        guard Int(alias) == nil, alias != "latest" else {
            throw HubError.badRequest(
                "\"\(alias)\" cannot be an alias: numbers name versions, and latest is the newest.")
        }
        return alias
    }

    /// The route's `{version}` (``checkedVersion(_:_:)``).
    static func versionNumber(_ context: BasicRequestContext) throws -> Int {
        try checkedVersion(context.parameters.require("version"), "version")
    }

    /// A version number from text (a path, `?ref=`): 1 to ``maximumVersion``.
    static func checkedVersion(_ text: String, _ name: String) throws -> Int {
        do {
            return try CheckedNumber.integer(text, name, in: 1...maximumVersion)
        } catch {
            throw HubError.badRequest("A version is a whole number: \(error.description)")
        }
    }

    /// A request's whole body, at most `limit` bytes (413 past it); a body cut short is the
    /// client's fault (400).
    static func body(of request: Request, upTo limit: Int) async throws -> Data {
        do {
            return Data(try await request.body.collect(upTo: limit).readableBytesView)
        } catch let error as any HTTPResponseError {
            throw error
        } catch {
            throw HubError.badRequest(Self.cutShort(error))
        }
    }

    /// The next piece of a streamed body; a body cut short is the client's fault (400).
    static func next(_ reader: inout RequestBody.AsyncIterator) async throws -> ByteBuffer? {
        do {
            return try await reader.next()
        } catch let error as any HTTPResponseError {
            throw error
        } catch {
            throw HubError.badRequest(Self.cutShort(error))
        }
    }

    static func cutShort(_ error: any Error) -> String {
        "The request body ended before its Content-Length said it would (\(error)); nothing was stored."
    }
}
