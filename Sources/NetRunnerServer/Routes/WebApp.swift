import FoundationEssentials
import HTTPTypes
import Hummingbird
import NIOCore
import NetRunnerHTTP
import NetRunnerImage

/// Net Runner's screen as a web page at `/`: plain HTML, CSS and JavaScript compiled into the
/// binary from `Resources/` (no CDN, no npm: it works offline; `make lint` parses the scripts).
///
/// A model picker; the live camera (`getUserMedia`) sending frames over the `/v1/live`
/// WebSocket at a settable interval (the seeds' `delayBetweenInferencesMs`), the newest frame
/// winning; pause and resume; drop or pick a photo; the top 5 over 0.1 with bars for
/// classifiers, boxes and labels over the picture for detectors, keypoints and the skeleton for
/// pose estimators, the mask and its legend for segmenters (`tasks.js`); the running average
/// latency split into decode, preprocess and inference; "what the model sees"; the model's
/// details. A photo the browser cannot draw (HEIC, TIFF: `/formats.js`, made from
/// ``ImageFormat``'s table) is shown as the server renders it (`/v1/render`, an album's
/// `?render=jpeg`); models still loading when the page opens are
/// followed (`/v1/models`, with a backoff) until each is ready or has failed.
/// Settings imports a model by URL (`/v1/imports`, progress shown) and picks it; Album runs a
/// model over a folder the server was started with (`--albums`), with a progress bar, and shows
/// the results as a grid of thumbnails, any one opened with its answer (boxes drawn:
/// `album.js`); Streams shows a `--stream`'s latest answered frame and its answer (`streams.js`).
enum WebApp {
    /// The page's files by route: content type and bytes.
    static let files: [(route: String, type: String, bytes: [UInt8])] = [
        ("/", "text/html; charset=utf-8", PackageResources.index_html),
        ("/tasks.js", "text/javascript; charset=utf-8", PackageResources.tasks_js),
        ("/app.js", "text/javascript; charset=utf-8", PackageResources.app_js),
        ("/album.js", "text/javascript; charset=utf-8", PackageResources.album_js),
        ("/streams.js", "text/javascript; charset=utf-8", PackageResources.streams_js),
        ("/app.css", "text/css; charset=utf-8", PackageResources.app_css),
        ("/formats.js", "text/javascript; charset=utf-8", Array(formatsScript.utf8)),
        // Browsers ask for one; a small SVG spares the page a 404 in its console.
        ("/favicon.ico", "image/svg+xml", PackageResources.favicon_svg),
    ]

    /// `/formats.js`: the photo formats as the page knows them, made from ``ImageFormat``'s table.
    ///
    /// `const photoFormats = [...]`, each format's name, file extensions, MIME types (the
    /// registered one first) and whether browsers draw it, rather than lists kept in the page's
    /// scripts. `app.js` reads it to pick the photos it hands to the server to render, and the
    /// file picker's types.
    static let formatsScript: String = {
        struct Format: Encodable {
            var name: String
            var extensions: [String]
            var mimeTypes: [String]
            var browserDraws: Bool
        }
        let formats = ImageFormat.allCases.map {
            Format(
                name: $0.rawValue, extensions: $0.fileExtensions, mimeTypes: [$0.mimeType] + $0.otherMIMETypes,
                browserDraws: $0.browserDraws)
        }
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = (try? encoder.encode(formats)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
        return "// Made by the server from NetRunnerImage's ImageFormat, the one table of photo formats.\n"
            + "const photoFormats = \(json);\n"
    }()

    /// The page's routes, open to anyone (the page's first load needs no key).
    static var routes: RouteList<BasicRequestContext> {
        var routes = RouteList<BasicRequestContext>()
        for file in files {
            let body = ByteBuffer(bytes: file.bytes)
            // The page is asked again each time (no-cache revalidates), so a new server's page
            // and script always go together.
            let headers: HTTPFields = [.contentType: file.type, .cacheControl: "no-cache"]
            routes.get(file.route, .open, .elsewhere("the web page")) { _, _ in
                Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
            }
        }
        return routes
    }
}
