import AsyncHTTPClient
import FoundationEssentials
import NIOCore
import NIOHTTP1
import NetRunnerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A client of a NetRunner hub (`netrunner hub serve`): list, publish, alias, resolve.
///
///     let hub = HubClient()   // NETRUNNER_HUB, else http://127.0.0.1:8090; NETRUNNER_HUB_TOKEN
///     let version = try await hub.push(file: "flowers.tiobundle.zip", name: "flowers", alias: "production")
///     let models = try await hub.models()
///
/// Downloads go through ``ModelDownloader`` and ``ModelManager`` (ML Kit's names), which keep
/// a verified cache.
public struct HubClient: Sendable {
    /// The environment variable naming the hub's address.
    public static let addressVariable = "NETRUNNER_HUB"
    /// The environment variable holding the client's key.
    public static let tokenVariable = "NETRUNNER_HUB_TOKEN"
    /// The address used when none is given.
    public static let defaultAddress = "http://127.0.0.1:8090"

    /// The hub's address, `http://host:port`.
    public var address: String
    /// The key sent as `Authorization: Bearer`, if any: only to the hub's own origin (its
    /// scheme, host and port), never to a download URL elsewhere or a redirect away.
    public var token: String?
    /// The largest file this client downloads: a resolution declaring more is refused before a
    /// byte is asked for (`--max-download-bytes`; default 1 GiB, the hub's own upload limit).
    public var maximumDownloadBytes: Int
    /// The default of ``maximumDownloadBytes``: 1 GiB.
    public static let defaultMaximumDownloadBytes = 1 << 30
    /// The largest version number a hub gives (its database's 32-bit integers).
    static let maximumVersion = Int(Int32.max)

    /// Creates a client.
    ///
    /// - Parameters:
    ///   - address: The hub's address (default `NETRUNNER_HUB`, else `http://127.0.0.1:8090`).
    ///   - token: The key (default `NETRUNNER_HUB_TOKEN`).
    ///   - maximumDownloadBytes: The largest file downloaded (default 1 GiB).
    public init(address: String? = nil, token: String? = nil, maximumDownloadBytes: Int = defaultMaximumDownloadBytes) {
        self.maximumDownloadBytes = maximumDownloadBytes
        let environment = { (name: String) in getenv(name).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        var chosen = address ?? environment(Self.addressVariable) ?? Self.defaultAddress
        while chosen.hasSuffix("/") { chosen.removeLast() }
        if !chosen.contains("://") { chosen = "http://" + chosen }
        self.address = chosen
        self.token = token ?? environment(Self.tokenVariable)
    }

    // MARK: Reading

    /// The models on the hub, optionally those matching `search` (name or description).
    public func models(search: String? = nil) async throws(HubClientError) -> [HubModel] {
        struct List: Decodable { var models: [HubModel] }
        let query = search.map { "?q=" + Self.escaped($0) } ?? ""
        return try await request("/v1/models" + query, as: List.self).models
    }

    /// A model with its versions and aliases.
    public func model(_ name: String) async throws(HubClientError) -> HubModel {
        try await request("/v1/models/\(Self.escaped(name))", as: HubModel.self)
    }

    /// An alias's history, oldest first.
    public func history(of alias: String, model name: String) async throws(HubClientError) -> [HubAliasChange] {
        struct List: Decodable { var history: [HubAliasChange] }
        return try await request(
            "/v1/models/\(Self.escaped(name))/aliases/\(Self.escaped(alias))/history", as: List.self
        ).history
    }

    /// What a reference resolves to; `nil` when the hub says the digest given as `current` is
    /// still the one (304: the update check).
    ///
    /// - Parameters:
    ///   - name: The model.
    ///   - reference: `latest`, a version number, an alias or `sha256:<hex>`.
    ///   - client: This client's id, for weighted aliases and adoption counts.
    ///   - current: The digest held locally, sent as `If-None-Match`.
    /// - Returns: The resolution, or `nil` when `current` is still the one.
    /// - Throws: ``HubClientError``.
    public func resolve(
        _ name: String, reference: String = "latest", client: String? = nil, current: String? = nil
    ) async throws(HubClientError) -> HubResolution? {
        switch try await checkForUpdate(name, reference: reference, client: client, current: current) {
        case .unchanged: nil
        case .changed(let resolution): resolution
        }
    }

    /// What the update check answered.
    enum UpdateCheck: Equatable {
        /// 304: the digest held is still the one; `version` is the version the reference names
        /// now, as the hub's `Content-Location` says (`nil` from a hub that does not say).
        /// Versions with the same bytes share a digest, so it may not be the version held.
        case unchanged(version: Int?)
        /// What the reference resolves to.
        case changed(HubResolution)
    }

    /// ``resolve(_:reference:client:current:)``, with the version a 304 names.
    func checkForUpdate(
        _ name: String, reference: String, client: String?, current: String?
    ) async throws(HubClientError) -> UpdateCheck {
        var path = "/v1/models/\(Self.escaped(name))/resolve?ref=\(Self.escaped(reference))"
        if let client { path += "&client=\(Self.escaped(client))" }
        var headers: [(String, String)] = []
        if let current, let digest = try? SHA256Digest(validating: current) {
            headers.append(("If-None-Match", "\"sha256:\(digest.hex)\""))
        }
        let (status, body, replyHeaders) = try await exchange("GET", path, headers: headers)
        if status == 304 {
            return .unchanged(
                version: replyHeaders.first(name: "Content-Location").flatMap { Self.version(in: $0, model: name) })
        }
        var resolution = try decode(HubResolution.self, status: status, body: body)
        try check(resolution, name: name)
        resolution.reference = reference
        return .changed(resolution)
    }

    /// The version of a `Content-Location` of the hub's: `.../v1/models/{name}/versions/{version}`
    /// for this model, else `nil`.
    static func version(in location: String, model name: String) -> Int? {
        let parts = location.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[parts.count - 2] == "versions", parts[parts.count - 3] == escaped(name)
        else { return nil }
        return try? CheckedNumber.integer(parts[parts.count - 1], "version", in: 1...maximumVersion)
    }

    /// Refuses a resolution no honest hub gives: another model's, a version or size out of
    /// range, an unknown format, a download URL that is not http(s). (Its digest was validated
    /// when it was decoded.)
    func check(_ resolution: HubResolution, name: String) throws(HubClientError) {
        guard resolution.name == name else {
            throw .badResponse(
                hub: address,
                reason: "it answered for \(String(resolution.name.prefix(80)).debugDescription), not \(name)")
        }
        do {
            _ = try CheckedNumber.integer(resolution.version, "version", in: 1...Self.maximumVersion)
            _ = try CheckedNumber.integer(resolution.size, "size", in: 1...Int.max)
        } catch {
            throw .badResponse(hub: address, reason: error.description)
        }
        guard ["zip", "tflite"].contains(resolution.format) else {
            throw .badResponse(
                hub: address,
                reason: "the format \(String(resolution.format.prefix(40)).debugDescription) is not zip or tflite")
        }
        _ = try download(resolution.download)
    }

    /// Where a resolution's `download` field points: resolved as a URL reference against the
    /// hub's address (RFC 3986), so `"/v1/blobs/..."` is on the hub, `"@host/x"` a path on the
    /// hub, `"https://cdn.example/x"` elsewhere.
    ///
    /// - Parameter reference: The field.
    /// - Returns: The URL, and whether it has the hub's origin (scheme, host, port): only then
    ///   does the key go with it.
    /// - Throws: ``HubClientError/badResponse(hub:reason:)`` for anything but an http(s) URL
    ///   without a user or password.
    func download(_ reference: String) throws(HubClientError) -> (url: String, sameOrigin: Bool) {
        let refuse = { () -> HubClientError in
            .badResponse(
                hub: address,
                reason: "the download \(String(reference.prefix(120)).debugDescription) is not an http(s) URL on a host"
            )
        }
        guard let base = URL(string: address), let hub = Self.origin(of: base),
            reference.utf8.count <= 4096,
            !reference.unicodeScalars.contains(where: { $0.value < 0x21 || $0 == "\u{7F}" }),
            let url = URL(string: reference, relativeTo: base)?.absoluteURL, let origin = Self.origin(of: url),
            url.user == nil, url.password == nil
        else { throw refuse() }
        return (url.absoluteString, origin == hub)
    }

    /// Refuses an address that would make odd request URLs: not http(s), no host, or a query or
    /// fragment (`http://h/?q=` would put every route after `?`).
    static func checkAddress(_ address: String) throws(HubClientError) {
        guard let url = URL(string: address), origin(of: url) != nil, url.query == nil, url.fragment == nil,
            !address.contains("?"), !address.contains("#")
        else {
            throw .unreachable(
                hub: address,
                reason: "that is not a hub address (http://HOST[:PORT][/PATH], without ? or #)")
        }
    }

    /// Scheme, lowercased host and port (the scheme's default if none) of an http(s) URL.
    static func origin(of url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host?.lowercased(), !host.isEmpty
        else { return nil }
        return "\(scheme)://\(host):\(url.port ?? (scheme == "https" ? 443 : 80))"
    }

    // MARK: Changing

    /// Publishes a zipped bundle, a bundle folder or a `.tflite` under a name (a new version),
    /// optionally moving an alias to it in the same step.
    ///
    /// A bundle folder is zipped while it is sent (``BundleZip``): no copy is written anywhere.
    ///
    /// - Parameters:
    ///   - file: A `.tiobundle.zip`, a bundle folder (`flowers.tiobundle`) or a `.tflite`.
    ///   - name: The model's name on the hub.
    ///   - alias: An alias to point at the new version.
    ///   - allowTaskChange: Publish a model of another task than the name's newest version
    ///     (the hub refuses it with 409 otherwise: `@latest` would change task under its users).
    /// - Returns: The version published.
    /// - Throws: ``HubClientError``: ``HubClientError/unreadable(path:reason:)`` or
    ///   ``HubClientError/cannotPush(path:reason:)`` before anything is sent.
    public func push(
        file: String, name: String, alias: String? = nil, allowTaskChange: Bool = false
    ) async throws(HubClientError) -> HubVersion {
        var information = stat()
        guard stat(file, &information) == 0 else {
            throw .unreadable(path: file, reason: String(cString: strerror(errno)))
        }
        let body: HTTPClientRequest.Body
        if information.st_mode & S_IFMT == S_IFDIR {
            let zip = try BundleZip(folder: file)
            body = .stream(zip, length: .known(Int64(zip.length)))
        } else {
            let size: Int
            do {
                size = try FileIO.openRegularFile(file).size
            } catch {
                throw .file(error, path: file)
            }
            body = .stream(FileChunks(path: file), length: .known(Int64(size)))
        }
        var path = "/v1/models/\(Self.escaped(name))/versions"
        var query = alias.map { ["alias=\(Self.escaped($0))"] } ?? []
        if allowTaskChange { query.append("allow_task_change=true") }
        if !query.isEmpty { path += "?" + query.joined(separator: "&") }
        do {
            let (status, data) = try await send(
                "POST", path, headers: [("Content-Type", "application/octet-stream")], body: body)
            return try decode(HubVersion.self, status: status, body: data)
        } catch .unreachable(let hub, let reason) where reason == Self.closedConnection && !isFolder(file) {
            // The connection closed before the answer came: the upload may have been published
            // or not. The hub says which: a version with this file's digest means it was; if
            // there is none, nothing was published and the upload is sent once more.
            guard let digest = Self.digest(ofFileAt: file) else { throw .unreachable(hub: hub, reason: reason) }
            if let published = try? await model(name).versions?.last(where: { $0.sha256 == digest }) {
                return published
            }
            let size = (try? FileIO.openRegularFile(file).size) ?? 0
            let (status, data) = try await send(
                "POST", path, headers: [("Content-Type", "application/octet-stream")],
                body: .stream(FileChunks(path: file), length: .known(Int64(size))))
            return try decode(HubVersion.self, status: status, body: data)
        }
    }

    /// What ``HTTPDownload`` says when the server closed the connection before answering.
    static let closedConnection = "the server closed the connection"

    /// Whether `path` is a folder (pushed as a zip made on the fly, so not hashed here).
    private func isFolder(_ path: String) -> Bool {
        var information = stat()
        return stat(path, &information) == 0 && information.st_mode & S_IFMT == S_IFDIR
    }

    /// The SHA-256 of a file as lower-case hex, or `nil` when it cannot be read.
    static func digest(ofFileAt path: String) -> String? {
        try? SHA256.hexDigest(ofFileAt: path).digest
    }

    /// Points an alias at a version, or at several with weights (a staged rollout).
    ///
    /// A gated alias (``HubGate``) moves only to versions that passed its gate; `force` (an
    /// admin key) moves it anyway, the reason kept in its history.
    public func setAlias(
        _ alias: String, model name: String, targets: [HubAliasTarget], force reason: String? = nil
    ) async throws(HubClientError) -> HubAlias {
        struct Body: Encodable {
            var targets: [HubAliasTarget]
            var force: Bool?
            var reason: String?
        }
        let body = Body(targets: targets, force: reason == nil ? nil : true, reason: reason)
        let data = (try? JSONCoding.encoder().encode(body)) ?? Data()
        let (status, reply) = try await send(
            "PUT", "/v1/models/\(Self.escaped(name))/aliases/\(Self.escaped(alias))",
            headers: [("Content-Type", "application/json")], body: .bytes(ByteBuffer(bytes: data)))
        return try decode(HubAlias.self, status: status, body: reply)
    }

    /// Points an alias back where it was before its last change.
    public func rollback(_ alias: String, model name: String) async throws(HubClientError) -> HubAlias {
        let (status, reply) = try await send(
            "POST", "/v1/models/\(Self.escaped(name))/aliases/\(Self.escaped(alias))/rollback")
        return try decode(HubAlias.self, status: status, body: reply)
    }

    /// Unpublishes a version (its number is never reused).
    public func delete(version: Int, model name: String) async throws(HubClientError) {
        let (status, reply) = try await send("DELETE", "/v1/models/\(Self.escaped(name))/versions/\(version)")
        _ = try decode(JSONValue.self, status: status, body: reply)
    }

    /// Makes an API key (admin scope needed); the key is shown only here.
    public func createKey(name: String, scope: HubScope) async throws(HubClientError) -> String {
        struct Body: Encodable {
            var name: String
            var scope: HubScope
        }
        struct Reply: Decodable { var key: String }
        let data = (try? JSONCoding.encoder().encode(Body(name: name, scope: scope))) ?? Data()
        let (status, reply) = try await send(
            "POST", "/v1/keys", headers: [("Content-Type", "application/json")], body: .bytes(ByteBuffer(bytes: data)))
        return try decode(Reply.self, status: status, body: reply).key
    }

    // MARK: Transport

    func request<Value: Decodable>(_ path: String, as type: Value.Type) async throws(HubClientError) -> Value {
        let (status, body) = try await send("GET", path)
        return try decode(type, status: status, body: body)
    }

    func send(
        _ method: String, _ path: String, headers: [(String, String)] = [], body: HTTPClientRequest.Body? = nil,
        timeout: Int64 = 600
    ) async throws(HubClientError) -> (status: Int, body: Data) {
        let (status, data, _) = try await exchange(method, path, headers: headers, body: body, timeout: timeout)
        return (status, data)
    }

    /// ``send(_:_:headers:body:timeout:)``, with the response's headers.
    func exchange(
        _ method: String, _ path: String, headers: [(String, String)] = [], body: HTTPClientRequest.Body? = nil,
        timeout: Int64 = 600
    ) async throws(HubClientError) -> (status: Int, body: Data, headers: HTTPHeaders) {
        try Self.checkAddress(address)
        var request = HTTPClientRequest(url: address + path)
        request.method = HTTPMethod(rawValue: method)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let body { request.body = body }
        // A request without a body is sent once more when the server closed a pooled connection
        // as it went out (the request never reached the hub). One with a body is not repeatable
        // (an upload might have been published), so it goes on a connection of its own: a
        // pooled one may be closing (its server stopped, or a new one on the same port).
        var attempts = body == nil ? 2 : 1
        let client = body == nil ? HTTPDownload.client : HTTPDownload.unpooledClient()
        defer { if body != nil { client.shutdown { _ in } } }
        while true {
            attempts -= 1
            do {
                let response = try await client.execute(request, timeout: .seconds(timeout))
                let data = try await response.body.collect(upTo: 64 << 20)
                return (Int(response.status.code), Data(data.readableBytesView), response.headers)
            } catch let error as HubClientError {
                throw error
            } catch let error as HTTPClientError where error == .remoteConnectionClosed && attempts > 0 {
                continue
            } catch {
                throw .unreachable(hub: address, reason: HTTPDownload.reason(for: error))
            }
        }
    }

    func decode<Value: Decodable>(_ type: Value.Type, status: Int, body: Data) throws(HubClientError) -> Value {
        guard (200..<300).contains(status) else {
            let message =
                (try? JSONDecoder().decode([String: JSONValue].self, from: body))?["error_description"]
                .flatMap { if case .string(let text) = $0 { text } else { nil } }
                ?? String(decoding: body.prefix(300), as: UTF8.self)
            throw .refused(hub: address, status: status, message: message)
        }
        do {
            return try JSONDecoder().decode(type, from: body)
        } catch {
            throw .badResponse(hub: address, reason: Self.reason(for: error))
        }
    }

    /// A decoding error as a person reads it: the field and what was wrong with it.
    static func reason(for error: any Error) -> String {
        let (path, text): ([any CodingKey], String)
        switch error as? DecodingError {
        case .dataCorrupted(let context):
            (path, text) = (context.codingPath, context.debugDescription)
        case .typeMismatch(let type, let context):
            (path, text) = (context.codingPath, "expected \(type): \(context.debugDescription)")
        case .valueNotFound(_, let context):
            (path, text) = (context.codingPath, context.debugDescription)
        case .keyNotFound(let key, let context):
            (path, text) = (context.codingPath + [key], "missing")
        default:
            return "\(error)"
        }
        let field = path.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        return field.isEmpty ? text : "\(field): \(text)"
    }

    static func escaped(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            let scalar = Unicode.Scalar(byte)
            if (scalar.properties.isAlphabetic && byte < 128) || (48...57).contains(byte) || "-._~".utf8.contains(byte)
            {
                out.unicodeScalars.append(scalar)
            } else {
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

/// A file read in 1 MiB pieces, as a request body.
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let path: String

    struct AsyncIterator: AsyncIteratorProtocol {
        let descriptor: Int32
        var finished = false

        mutating func next() async throws -> ByteBuffer? {
            guard !finished, descriptor >= 0 else { return nil }
            var buffer = ByteBuffer()
            buffer.reserveCapacity(1 << 20)
            let count = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 1 << 20) { raw in
                Swift.max(0, read(descriptor, raw.baseAddress, 1 << 20))
            }
            if count == 0 {
                finished = true
                close(descriptor)
                return nil
            }
            return buffer
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(descriptor: open(path, O_RDONLY | O_CLOEXEC))
    }
}
