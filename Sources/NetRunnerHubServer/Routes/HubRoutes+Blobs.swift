import HTTPTypes
import Hummingbird
import NetRunnerHTTP
import NetRunnerHub
import NetRunnerSupport

/// Blobs by digest, for downloads and their resumption.
extension HubRoutes {
    func addBlobRoutes(to routes: inout RouteList<BasicRequestContext>) {
        routes.get("/v1/blobs/{digest}", .keyed, .operation("blob"), handler: blob)
        routes.on(
            .head, "/v1/blobs/{digest}", .keyed, .elsewhere("the GET of the same route, without its body"),
            handler: blob)
    }

    /// A blob by digest: strong ETag (the digest), `Range` (one range) and `If-Range` for resume.
    func blob(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        _ = try await authorize(request, .read)
        let digest = try context.parameters.require("digest")
        let hex = digest.hasPrefix("sha256:") ? String(digest.dropFirst(7)) : digest
        guard hex.count == 64, hex.allSatisfy({ $0.isHexDigit && !$0.isUppercase }),
            await blobs.contains(hex), try await store.isBlobReferenced(hex), let size = await blobs.size(of: hex)
        else {
            throw HubError.notFound("No file sha256:\(hex.prefix(64)) on this hub.")
        }
        let etag = "\"sha256:\(hex)\""
        var headers: HTTPFields = [
            .eTag: etag, .acceptRanges: "bytes", .contentType: "application/octet-stream",
            .cacheControl: "public, max-age=31536000, immutable",
        ]
        if request.headers[.ifNoneMatch] == etag { return Response(status: .notModified, headers: headers) }
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
            let body = try await blobs.body(of: hex, range: range, context: context)
            return Response(status: .partialContent, headers: headers, body: body)
        }
        headers[.contentLength] = "\(size)"
        let body = try await blobs.body(of: hex, range: nil, context: context)
        return Response(status: .ok, headers: headers, body: body)
    }

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
}
