import Dispatch
import FoundationEssentials
import Hummingbird
import Logging
import NIOCore
import NetRunner
import NetRunnerEngine
import NetRunnerHTTP
import NetRunnerImage
import NetRunnerJobs
import NetRunnerSupport
import Synchronization

/// Net Runner's photo albums: bulk inference over a folder the server was started with
/// (`--albums DIR`), its progress, and the results one by one.
///
/// - `GET /v1/albums`: the albums (id, name, image count);
/// - `GET /v1/albums/{album}`: its images, by index and path under the folder;
/// - `GET /v1/albums/{album}/images/{index}` (`?thumbnail=1` for a small JPEG, `?render=jpeg`
///   and `max=N` for the whole photo as a JPEG, upright, for a browser that cannot draw its
///   format): an image, named by its index only, so no path from a request ever reaches the
///   file system;
/// - `POST /v1/albums/{album}/runs?model=ID` (and the answer options of `/classify`): starts a
///   run (202, `Location: /v1/runs/{id}`);
/// - `GET /v1/runs/{id}?offset=N&limit=M`: its progress and results, one results line per
///   image (the shape of `netrunner bulk`'s lines).
///
/// At most ``AlbumRuns/maximumRunning`` runs go at once (another gets 429 with `Retry-After`),
/// and together they feed the engine at most about one image per worker at a time, so requests
/// from the page and from programs still get their turn; the last 10 runs are kept.
struct AlbumRoutes {
    let engine: InferenceEngine
    let albums: [Album]
    let maximumImageBytes: Int
    let runs = AlbumRuns()
    let thumbnails = ThumbnailCache()

    /// A folder of photos.
    struct Album: Sendable {
        var id: String
        var name: String
        var folder: String
        var files: [String]
        var skipped: Int
        /// The folder, whose files are read only while they lie inside it; `nil` when it could
        /// not be opened (then it has no files).
        var contained: ContainedFolder? = nil

        /// The albums of some folders, ids unique (the folder's name, then `-2`, `-3`...).
        ///
        /// An image that leads out of its album's folder (a link to `/etc/passwd` named
        /// `cat.jpg`, or a folder on its way that is such a link) is left out, counted as skipped
        /// and logged with where it points: an album shows others only what its folder holds.
        static func load(_ folders: [String], logger: Logger = Logger(label: "netrunner.serve")) -> [Album] {
            var albums: [Album] = []
            for folder in folders {
                let base = folder.count > 1 && folder.hasSuffix("/") ? String(folder.dropLast()) : folder
                let listing = ImageFiles.listing(of: [base])
                let name = base.split(separator: "/").last.map(String.init) ?? base
                var id = String(
                    String.UnicodeScalarView(
                        name.lowercased().unicodeScalars.map {
                            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) ? $0 : "-"
                        }))
                if id.isEmpty { id = "album" }
                let stem = id
                var number = 2
                while albums.contains(where: { $0.id == id }) {
                    id = "\(stem)-\(number)"
                    number += 1
                }
                let contained = try? ContainedFolder(base, name: "the album")
                var files: [String] = []
                var refused = 0
                for file in listing.files {
                    let relative = file.hasPrefix(base + "/") ? String(file.dropFirst(base.count + 1)) : file
                    do throws(ContainedFolder.Refusal) {
                        guard let contained else { throw .missing(entry: base, target: nil, reason: "not a folder") }
                        _ = try contained.resolve(relative)
                        files.append(file)
                    } catch  where error.leadsOutside {
                        refused += 1
                        logger.warning("album \(id): \(error)")
                    } catch {
                        // Gone since it was listed: offered, and answered as unreadable if asked.
                        files.append(file)
                    }
                }
                albums.append(
                    Album(
                        id: id, name: name, folder: base, files: files,
                        skipped: listing.skipped.values.reduce(0, +) + listing.unreadable.count + refused,
                        contained: contained))
            }
            return albums
        }

        /// A file's path under the album's folder.
        func relative(_ index: Int) -> String {
            let file = files[index]
            return file.hasPrefix(folder + "/") ? String(file.dropFirst(folder.count + 1)) : file
        }

        /// The real path of an image, when it lies inside the album's folder.
        func resolved(_ index: Int) -> String? {
            try? contained?.resolve(relative(index))
        }

        /// The bytes of an image, read only while it lies inside the album's folder (checked
        /// again as it is opened: a link swapped in since the album was listed is refused).
        ///
        /// - Parameters:
        ///   - index: The image's index.
        ///   - maximumSize: The largest file read.
        /// - Returns: Its bytes.
        /// - Throws: A message for the client, naming the image under the album but never
        ///   where a link out points.
        func read(_ index: Int, maximumSize: Int) throws(AlbumReadError) -> Data {
            let name = relative(index)
            guard let contained else { throw AlbumReadError(message: "\(name) cannot be read") }
            do throws(ContainedFolder.Refusal) {
                return try contained.contents(of: name, maximumSize: maximumSize)
            } catch  where error.leadsOutside {
                throw AlbumReadError(message: "\(name): not read, it leads outside the album")
            } catch .tooLarge(_, let byteCount, let limit) {
                throw AlbumReadError(message: "\(name) is \(byteCount) bytes, more than the limit of \(limit) bytes")
            } catch {
                throw AlbumReadError(message: "\(name) cannot be read")
            }
        }
    }

    /// Why an album's image was not read, as its client may see it.
    struct AlbumReadError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// The routes.
    var routes: RouteList<BasicRequestContext> {
        var routes = RouteList<BasicRequestContext>()
        routes.get("/v1/albums", .keyed, .operation("listAlbums")) { _, _ in
            struct Summary: Encodable {
                var id: String
                var name: String
                var images: Int
                var skipped: Int
            }
            struct List: Encodable { var albums: [Summary] }
            return HTTPReply.json(
                List(
                    albums: albums.map {
                        Summary(id: $0.id, name: $0.name, images: $0.files.count, skipped: $0.skipped)
                    }))
        }
        routes.get("/v1/albums/{album}", .keyed, .operation("getAlbum")) { _, context in
            struct Image: Encodable {
                var index: Int
                var file: String
            }
            struct Contents: Encodable {
                var id: String
                var name: String
                var images: [Image]
            }
            guard let album = album(context) else { return unknownAlbum(context) }
            return HTTPReply.json(
                Contents(
                    id: album.id, name: album.name,
                    images: album.files.indices.map { Image(index: $0, file: album.relative($0)) }))
        }
        routes.get("/v1/albums/{album}/images/{index}", .keyed, .operation("getAlbumImage")) { request, context in
            guard let album = album(context) else { return unknownAlbum(context) }
            guard let index = context.parameters.get("index").flatMap({ Int($0) }), album.files.indices.contains(index)
            else {
                return HTTPReply.error(
                    "No image with this index in album \"\(album.id)\" (0 to \(album.files.count - 1)).",
                    status: .notFound)
            }
            let limit = maximumImageBytes
            let query = request.uri.queryParameters
            if let render = query.get("render") {
                // A photo the browser cannot draw (HEIC, TIFF), as a JPEG it can, upright.
                guard render == "jpeg", query.getAll("render").count == 1 else {
                    return HTTPReply.error(
                        "render takes one value, jpeg (the photo as a JPEG, upright), given once, not "
                            + "\"\(render.prefix(32))\"\(query.getAll("render").count > 1 ? " and others" : "").",
                        status: .badRequest)
                }
                let longestSide = try ImageRendering.longestSide(query, known: nil)
                let data: Data
                do {
                    data = try album.read(index, maximumSize: limit)
                } catch {
                    return HTTPReply.error("\(album.relative(index)) cannot be read.", status: .notFound)
                }
                do {
                    return ImageRendering.response(
                        try await engine.render(image: data, longestSide: longestSide, source: album.relative(index)))
                } catch EngineError.badInput(let reason) {
                    // The album's photo, not the request, is at fault (as a thumbnail's).
                    return HTTPReply.error(reason, status: .unprocessableContent)
                }
            }
            if query.get("max") != nil {
                return HTTPReply.error(
                    "max goes with render=jpeg: the longest side of the photo rendered as a JPEG.", status: .badRequest)
            }
            if query.get("thumbnail") != nil {
                // By its real path, checked to lie inside the album (no link left on the way).
                guard let real = album.resolved(index), let jpeg = await thumbnails.jpeg(of: real) else {
                    return HTTPReply.error("\(album.relative(index)) cannot be decoded.", status: .unprocessableContent)
                }
                return Response(
                    status: .ok, headers: [.contentType: "image/jpeg", .cacheControl: "max-age=3600"],
                    body: .init(byteBuffer: ByteBuffer(bytes: jpeg)))
            }
            do {
                let data = try album.read(index, maximumSize: limit)
                // The type of the format its bytes are, from ImageFormat's table.
                let type = ImageFormat.sniff(data.prefix(16))?.mimeType ?? "application/octet-stream"
                return Response(
                    status: .ok, headers: [.contentType: type], body: .init(byteBuffer: ByteBuffer(bytes: data)))
            } catch {
                return HTTPReply.error("\(album.relative(index)) cannot be read.", status: .notFound)
            }
        }
        routes.post("/v1/albums/{album}/runs", .keyed, .operation("runAlbum")) { request, context in
            guard let album = album(context) else { return unknownAlbum(context) }
            let query = request.uri.queryParameters
            guard let modelID = query.get("model") else {
                return HTTPReply.error(
                    "Name the model: POST /v1/albums/\(album.id)/runs?model=ID (GET /v1/models lists them).",
                    status: .badRequest)
            }
            let served = try engine.model(modelID)
            let options = try AnswerOptions(query, task: served.kind, also: ["model"])
            guard let run = runs.begin(album: album, model: modelID) else {
                return HTTPReply.error(
                    "\(AlbumRuns.maximumRunning) album runs are going already: start this one when one has finished.",
                    status: .tooManyRequests, headers: [.retryAfter: "5"])
            }
            let (engine, runs, limit) = (self.engine, self.runs, maximumImageBytes)
            Task.detached {
                await AlbumRuns.run(
                    run, album: album, model: modelID, options: options, engine: engine, runs: runs, limit: limit)
            }
            return HTTPReply.json(
                runs.report(run, offset: 0, limit: 0) ?? AlbumRunReport(id: run, album: album.id, model: modelID),
                status: .accepted, headers: [.location: "/v1/runs/\(run)"])
        }
        routes.get("/v1/runs/{id}", .keyed, .operation("getAlbumRun")) { request, context in
            let query = request.uri.queryParameters
            // Each given once, as a whole number in range; anything else is the caller's mistake.
            func number(_ name: String, _ range: ClosedRange<Int>, default value: Int) -> Int? {
                let given = query.getAll(name)
                guard !given.isEmpty else { return value }
                guard given.count == 1, let parsed = Int(given[0]), range.contains(parsed) else { return nil }
                return parsed
            }
            guard let offset = number("offset", 0...Int(Int32.max), default: 0),
                let limit = number("limit", 0...10_000, default: 1000)
            else {
                return HTTPReply.error(
                    "offset is a whole number from 0, and limit one from 0 to 10000, each given once.",
                    status: .badRequest)
            }
            guard let report = runs.report(context.parameters.get("id") ?? "", offset: offset, limit: limit) else {
                return HTTPReply.error("No album run with this id.", status: .notFound)
            }
            return HTTPReply.json(report)
        }
        return routes
    }

    private func album(_ context: BasicRequestContext) -> Album? {
        let id = context.parameters.get("album") ?? ""
        return albums.first { $0.id == id }
    }

    private func unknownAlbum(_ context: BasicRequestContext) -> Response {
        let known = albums.map(\.id).joined(separator: ", ")
        return HTTPReply.error(
            "No album \"\(context.parameters.get("album") ?? "")\" here; "
                + (albums.isEmpty ? "start the server with --albums DIR." : "the albums are: \(known)."),
            status: .notFound)
    }
}
