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
/// (the update check: strong ETag, 304), blobs (ETag, Range, If-Range), keys.
struct HubRoutes: Sendable {
    let store: HubStore
    let blobs: BlobStore
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

    /// The routes.
    ///
    /// The access each declares is what its handler's `authorize` asks: open, or a
    /// key of the handler's scope (reading needs none with `--anonymous-read`, the default).
    var routes: RouteList<BasicRequestContext> {
        var routes = RouteList<BasicRequestContext>()
        let page = Route<BasicRequestContext>.Documentation.elsewhere("the hub's web page")
        routes.get("/", .open, page) { _, _ in HubPage.response() }
        routes.on(.head, "/", .open, page) { _, _ in HubPage.response() }
        routes.get("/v1/health", .open, .operation("health")) { _, _ in HTTPReply.json(["status": "ok"]) }
        routes.get("/metrics", .open, .operation("metrics")) { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(
                status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: await gates.metricsText())))
        }
        routes.get("/v1/models", .keyed, .operation("listModels")) { request, _ in
            _ = try await authorize(request, .read)
            let models = try await store.models(search: request.uri.queryParameters.get("q"))
            return HTTPReply.json(["models": models])
        }
        routes.get("/v1/models/{name}", .keyed, .operation("getModel")) { request, context in
            _ = try await authorize(request, .read)
            let name = try Self.name(context)
            let versions = try await store.versions(of: name)
            guard let latest = versions.last, let first = versions.first else {
                throw HubError.notFound("No model \"\(name)\" on this hub (GET /v1/models lists them).")
            }
            return HTTPReply.json(
                HubModel(
                    name: name, description: latest.description, latestVersion: latest.version, versions: versions,
                    aliases: try await store.aliases(of: name), createdAt: first.createdAt))
        }
        routes.post("/v1/models/{name}/versions", .keyed, .operation("publish")) { request, context in
            let who = try await authorize(request, .publish)
            let name = try Self.name(context)
            let alias = try request.uri.queryParameters.get("alias").map { try Self.checkedAlias($0) }
            return HTTPReply.json(try await publish(request, name: name, alias: alias, by: who), status: .created)
        }
        routes.get("/v1/models/{name}/versions/{version}", .keyed, .operation("getVersion")) { request, context in
            _ = try await authorize(request, .read)
            let (name, number) = (try Self.name(context), try Self.versionNumber(context))
            guard let version = try await store.version(number, of: name) else {
                throw HubError.notFound("\(name) has no version \(number).")
            }
            return HTTPReply.json(version)
        }
        routes.on(.delete, "/v1/models/{name}/versions/{version}", .keyed, .operation("deleteVersion")) {
            request, context in
            let who = try await authorize(request, .admin)
            let (name, number) = (try Self.name(context), try Self.versionNumber(context))
            guard try await store.version(number, of: name) != nil else {
                throw HubError.notFound("\(name) has no version \(number).")
            }
            try await store.delete(version: number, of: name, by: who)
            return HTTPReply.json(["deleted": "\(name)@\(number)"])
        }
        routes.get("/v1/models/{name}/aliases/{alias}", .keyed, .operation("getAlias")) { request, context in
            _ = try await authorize(request, .read)
            let (name, alias) = (
                try Self.name(context), try Self.checkedAlias(context.parameters.get("alias") ?? "")
            )
            guard let found = try await store.alias(alias, of: name) else {
                throw HubError.notFound("\(name) has no alias \"\(alias)\".")
            }
            return HTTPReply.json(found)
        }
        routes.on(.put, "/v1/models/{name}/aliases/{alias}", .keyed, .operation("setAlias")) { request, context in
            let who = try await authorize(request, .publish)
            let (name, alias) = (
                try Self.name(context), try Self.checkedAlias(context.parameters.get("alias") ?? "")
            )
            let (targets, force) = try await Self.targets(request)
            if force != nil { _ = try await authorize(request, .admin) }
            do {
                let (moved, forced) = try await store.setAlias(alias, of: name, targets: targets, by: who, force: force)
                if forced { await gates.countForced() }
                return HTTPReply.json(moved)
            } catch HubError.gateRefused(let text) {
                await gates.countRefusal()
                throw HubError.gateRefused(text)
            }
        }
        routes.post("/v1/models/{name}/aliases/{alias}/rollback", .keyed, .operation("rollback")) { request, context in
            let who = try await authorize(request, .publish)
            let (name, alias) = (
                try Self.name(context), try Self.checkedAlias(context.parameters.get("alias") ?? "")
            )
            return HTTPReply.json(try await store.rollback(alias, of: name, by: who))
        }
        routes.get("/v1/models/{name}/aliases/{alias}/history", .keyed, .operation("aliasHistory")) {
            request, context in
            _ = try await authorize(request, .read)
            let (name, alias) = (
                try Self.name(context), try Self.checkedAlias(context.parameters.get("alias") ?? "")
            )
            return HTTPReply.json(["history": try await store.history(of: alias, of: name)])
        }
        routes.get("/v1/models/{name}/adoption", .keyed, .operation("adoption")) { request, context in
            _ = try await authorize(request, .read)
            struct Count: Encodable {
                var version: Int
                var clients: Int
            }
            let counts = try await store.adoption(of: try Self.name(context))
            return HTTPReply.json(["versions": counts.map { Count(version: $0.version, clients: $0.clients) }])
        }
        routes.get("/v1/models/{name}/resolve", .keyed, .operation("resolve")) { request, context in
            try await resolve(request, context)
        }
        routes.get("/v1/blobs/{digest}", .keyed, .operation("blob")) { request, context in
            try await blob(request, context)
        }
        routes.on(.head, "/v1/blobs/{digest}", .keyed, .elsewhere("the GET of the same route, without its body")) {
            request, context in
            try await blob(request, context)
        }
        routes.post("/v1/keys", .keyed, .operation("createKey")) { request, _ in
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
        routes.get("/v1/keys", .keyed, .operation("listKeys")) { request, _ in
            _ = try await authorize(request, .admin)
            let keys = try await store.keys().map {
                ["name": $0.name, "scope": $0.scope, "created_at": $0.createdAt]
            }
            return HTTPReply.json(["keys": keys])
        }
        routes.on(.delete, "/v1/keys/{name}", .keyed, .operation("deleteKey")) { request, context in
            _ = try await authorize(request, .admin)
            let name = context.parameters.get("name") ?? ""
            guard try await store.deleteKey(named: name) else { throw HubError.notFound("No key named \(name).") }
            return HTTPReply.json(["deleted": name])
        }
        addGateRoutes(to: &routes)
        return routes
    }

    // MARK: Publishing

    /// Takes an upload: streamed into the data folder (size-limited), validated as `netrunner
    /// import` does (a child process runs the model), stored, then recorded.
    ///
    /// The version is recorded in one transaction; until that commits nothing of it is visible.
    func publish(_ request: Request, name: String, alias: String?, by who: String) async throws -> HubVersion {
        if let length = request.headers[.contentLength] {
            do {
                _ = try CheckedNumber.integer(length, "Content-Length", in: 0...maximumUploadBytes)
            } catch {
                throw HubError.tooLarge(
                    "The upload is \(length.prefix(40)) bytes; this hub takes at most \(maximumUploadBytes) "
                        + "(--max-upload-bytes).")
            }
        }
        // uploads/<host>-<pid>/<random>/<name>: a .tflite is described by its hub name.
        let uploads = Uploads.folder(in: dataFolder + "/uploads")
        try FileManager.default.createDirectory(atPath: uploads, withIntermediateDirectories: true)
        var template = Array((uploads + "/upload-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw HubError.conflict("cannot store the upload: \(String(cString: strerror(errno)))")
        }
        let folder = String(cString: made)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/" + name
        var kept = false
        defer { if !kept { unlink(file) } }
        let sha256: String
        let size: Int
        do {
            let writer = try HashingFileWriter(creating: file)
            var reader = request.body.makeAsyncIterator()
            while let buffer = try await Self.next(&reader) {
                guard writer.byteCount + buffer.readableBytes <= maximumUploadBytes else {
                    throw HubError.tooLarge(
                        "The upload is larger than this hub's limit of \(maximumUploadBytes) bytes.")
                }
                try buffer.withUnsafeReadableBytes { try writer.write($0) }
            }
            size = writer.byteCount
            sha256 = try writer.finish()
        } catch let error as FileError {
            throw HubError.conflict("cannot store the upload: \(error.reason)")
        }
        guard size > 0 else { throw HubError.badRequest("The upload is empty: send a zipped bundle or a .tflite.") }
        let staged: StagedModel
        do {
            staged = try await ModelImporter(modelsFolder: dataFolder + "/staging").stage(from: file)
        } catch {
            throw HubError.invalidModel(Self.uploadReason(error, file: file))
        }
        let format = staged.path.lowercased().hasSuffix(".tflite") ? "tflite" : "zip"
        try blobs.adopt(file, sha256: sha256)
        kept = true
        let (version, evaluations) = try await store.publish(
            name: name, sha256: sha256, size: size, format: format, task: staged.kind.rawValue, modelID: staged.id,
            description: staged.name, by: who, alias: alias)
        logger.notice("published \(name)@\(version.version) (\(sha256.prefix(12)), \(size) bytes) by \(who)")
        await gates.submit(evaluations)
        return version
    }

    /// An import error in an upload's words (the temporary file's name left out).
    static func uploadReason(_ error: any Error, file: String) -> String {
        var text = "\(error)".replacing("Cannot import \(file): ", with: "").replacing(file, with: "the upload")
        text = text.replacing(String(file[..<(file.lastIndex(of: "/") ?? file.endIndex)]) + "/", with: "")
        if text.hasSuffix(" Nothing was installed.") { text = String(text.dropLast(" Nothing was installed.".count)) }
        return "The upload is not a model this hub takes: " + text
    }

    // MARK: Resolving and downloading

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

    /// A blob by digest: strong ETag (the digest), `Range` (one range) and `If-Range` for resume.
    func blob(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        _ = try await authorize(request, .read)
        let digest = context.parameters.get("digest") ?? ""
        let hex = digest.hasPrefix("sha256:") ? String(digest.dropFirst(7)) : digest
        guard hex.count == 64, hex.allSatisfy({ $0.isHexDigit && !$0.isUppercase }), blobs.contains(hex),
            try await store.isBlobReferenced(hex), let size = blobs.size(of: hex)
        else {
            throw HubError.notFound("No file sha256:\(hex.prefix(64)) on this hub.")
        }
        let etag = "\"sha256:\(hex)\""
        var headers: HTTPFields = [
            .eTag: etag, .acceptRanges: "bytes", .contentType: "application/octet-stream",
            .cacheControl: "public, max-age=31536000, immutable",
        ]
        if request.headers[.ifNoneMatch] == etag { return Response(status: .notModified, headers: headers) }
        let fileIO = FileIO()
        var range: ClosedRange<Int>?
        if let header = request.headers[.range], request.headers[.ifRange].map({ $0 == etag }) ?? true {
            guard let parsed = Self.byteRange(header, size: size) else {
                headers[.contentRange] = "bytes */\(size)"
                return Response(status: .rangeNotSatisfiable, headers: headers)
            }
            range = parsed
        }
        if request.method == .head {
            headers[.contentLength] = "\(size)"
            return Response(status: .ok, headers: headers)
        }
        if let range {
            headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound)/\(size)"
            headers[.contentLength] = "\(range.count)"
            let body = try await fileIO.loadFile(
                path: blobs.path(of: hex), range: range, context: context, chunkLength: Self.chunkLength)
            return Response(status: .partialContent, headers: headers, body: body)
        }
        headers[.contentLength] = "\(size)"
        let body = try await fileIO.loadFile(path: blobs.path(of: hex), context: context, chunkLength: Self.chunkLength)
        return Response(status: .ok, headers: headers, body: body)
    }

    /// The pieces a blob is read and sent in (1 MiB: fewer hops through the thread pool than
    /// Hummingbird's default 128 KiB; measured 1.17 GB/s against 1.68 for nginx's sendfile before).
    static let chunkLength = 1 << 20

    /// `bytes=N-`, `bytes=N-M` or `bytes=-K` within `size`; `nil` if unsatisfiable or several.
    ///
    /// Numbers are decimal digits only; one past `Int.max` counts as "beyond any file".
    static func byteRange(_ header: String, size: Int) -> ClosedRange<Int>? {
        guard header.hasPrefix("bytes="), !header.contains(","), size > 0 else { return nil }
        let spec = header.dropFirst(6)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let number = { (text: Substring) -> Int? in
            guard !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
            return (try? CheckedNumber.integer(text, "Range", in: 0...Int.max)) ?? Int.max
        }
        if parts[0].isEmpty {
            guard let suffix = number(parts[1]), suffix > 0 else { return nil }
            return (size - min(size, suffix))...(size - 1)
        }
        guard let start = number(parts[0]), start < size else { return nil }
        var end = size - 1
        if !parts[1].isEmpty {
            guard let last = number(parts[1]) else { return nil }
            end = min(end, last)
        }
        guard end >= start else { return nil }
        return start...end
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

    static func name(_ context: BasicRequestContext) throws -> String {
        try checkedName(context.parameters.get("name") ?? "", what: "model name")
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

    static func versionNumber(_ context: BasicRequestContext) throws -> Int {
        try checkedVersion(context.parameters.get("version") ?? "", "version")
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
