import Foundation
import NetRunnerEngine
import NetRunnerImage
import NetRunnerTestSupport
import Testing

@testable import NetRunnerServer

/// Photos a browser cannot draw, rendered by the server as JPEGs it can (a new user's issue:
/// an iPhone's HEIC showed black on the page, the skeleton floating on nothing): `POST
/// /v1/render` and an album photo's `?render=jpeg`, in process.
@Suite("Photos rendered as JPEGs for the browser")
struct RenderRouteTests {
    /// The folder of the committed photos of every format (`formats.json` describes them).
    static let formats = "Tests/Fixtures/Formats/"

    /// Runs `body` against the composed server with no model (a rendering needs none), its
    /// engine started, with `album` as its album if given.
    static func with(album: String? = nil, _ body: @Sendable (ServerSession) async throws -> Void) async throws {
        let engine = InferenceEngine(models: [], configuration: .init(threads: 1))
        try await InProcessServer.started(engine)
        do {
            try await InProcessServer.test(engine: engine, configuration: .init(albums: album.map { [$0] } ?? [])) {
                client in try await body(ServerSession(client: client))
            }
        } catch {
            await engine.shutdown()
            throw error
        }
        await engine.shutdown()
    }

    /// The pixels as the server decodes them: every format, the orientation applied, RGB.
    static func decoded(_ data: Data) throws -> PixelBuffer {
        try ImageDecoder.decode(data: data, options: .init(pixelFormat: .rgb24)).pixels
    }

    /// The mean and the largest difference of two images' bytes (the same size and format).
    static func difference(_ a: PixelBuffer, _ b: PixelBuffer) -> (mean: Double, largest: Int) {
        let (x, y) = (a.packedBytes, b.packedBytes)
        guard x.count == y.count, !x.isEmpty else { return (.infinity, .max) }
        var (sum, largest) = (0, 0)
        for (p, q) in zip(x, y) {
            let d = abs(Int(p) - Int(q))
            sum += d
            largest = max(largest, d)
        }
        return (Double(sum) / Double(x.count), largest)
    }

    @Test(
        "HEIC, AVIF and TIFF come back as JPEGs of their decoded size and pixels, upright when the file is turned",
        arguments: [
            ("heic_plain.heic", 131, 97), ("heic_irot.heic", 97, 131), ("heic_alpha.heic", 131, 97),
            ("avif_plain.avif", 131, 97), ("tiff_orientation6.tif", 97, 131), ("tiff_rgb_lzw.tif", 131, 97),
        ])
    func formats(name: String, width: Int, height: Int) async throws {
        let photo = try Fixtures.data(Self.formats + name)
        let expected = try Self.decoded(photo)
        #expect(expected.width == width && expected.height == height, "the decoder's size of \(name)")
        try await Self.with { server in
            for (body, type) in [(photo, "application/octet-stream"), (Self.form(photo, name: name), Self.formType)] {
                let reply = try await server.request("/v1/render", method: "POST", body: body, contentType: type)
                #expect(reply.status == 200, "\(name): \(String(decoding: reply.body.prefix(300), as: UTF8.self))")
                #expect(reply.headers["content-type"] == "image/jpeg")
                #expect(
                    reply.headers["image-width"] == String(width) && reply.headers["image-height"] == String(height))
                #expect(ImageFormat.sniff(reply.body.prefix(12)) == .jpeg)
                let rendered = try Self.decoded(reply.body)
                #expect(rendered.width == width && rendered.height == height, "\(name): \(rendered)")
                // A JPEG at quality 90 (chroma halved) of the same pixels: close, not equal.
                let (mean, largest) = Self.difference(rendered, expected)
                #expect(mean < 5 && largest < 96, "\(name): mean \(mean), largest \(largest)")
            }
        }
    }

    @Test(
        "The upright pixels are Pillow's (the turn applied, not only the size swapped), for HEIC's irot and TIFF's tag")
    func upright() async throws {
        try await Self.with { server in
            for name in ["heic_irot", "tiff_orientation6"] {
                let file = Self.formats + name + (name.hasPrefix("heic") ? ".heic" : ".tif")
                let reply = try await server.request("/v1/render", method: "POST", body: try Fixtures.data(file))
                let rendered = try Self.decoded(reply.body)
                // Pillow's decode, turned upright (Tests/Fixtures/Formats/formats.json).
                let pillow = try PixelBuffer(
                    width: 97, height: 131, format: .rgb24,
                    bytes: [UInt8](try Fixtures.data(Self.formats + name + ".rgb")))
                let (mean, _) = Self.difference(rendered, pillow)
                #expect(mean < 6, "\(name): mean difference \(mean) from Pillow's upright pixels")
                // Turned the wrong way (upside down: the same size), they are far from them.
                #expect(Self.difference(rendered.applyingOrientation(.down), pillow).mean > 10, "\(name)")
            }
            // A JPEG with the EXIF orientation 6 (stored 32 x 16): upright, 16 x 32.
            let turned = try await server.request(
                "/v1/render", method: "POST",
                body: try Fixtures.data("Tests/Fixtures/ImageReference/orientation_6.jpg"),
                contentType: "image/jpeg")
            #expect(
                turned.status == 200 && turned.headers["image-width"] == "16" && turned.headers["image-height"] == "32")
            let pixels = try Self.decoded(turned.body)
            #expect(pixels.width == 16 && pixels.height == 32)
        }
    }

    @Test("max shrinks the longest side, the aspect kept, the photo's own size in the headers")
    func maximum() async throws {
        let coffee = try Fixtures.data("Tests/Fixtures/Photos/test/coffee.jpg")  // 600 x 400
        try await Self.with { server in
            for (query, width, height) in [
                ("?max=100", 100, 67), ("?max=2048", 600, 400), ("", 600, 400), ("?max=1", 1, 1),
            ] {
                let reply = try await server.request("/v1/render" + query, method: "POST", body: coffee)
                #expect(reply.status == 200, "\(query)")
                #expect(reply.headers["image-width"] == "600" && reply.headers["image-height"] == "400", "\(query)")
                let pixels = try Self.decoded(reply.body)
                #expect(pixels.width == width && pixels.height == height, "\(query): \(pixels)")
            }
        }
    }

    @Test("Bad bodies and bad max are 4xx with a message, never a crash; an over-limit max is 400")
    func refusals() async throws {
        let coffee = try Fixtures.data("Tests/Fixtures/Photos/test/coffee.jpg")
        let heic = try Fixtures.data(Self.formats + "heic_plain.heic")
        let cases: [(String, Data, String?, Int, String)] = [
            ("/v1/render", Data("not an image at all".utf8), nil, 400, "not an image"),
            ("/v1/render", Data("%PDF-1.7..".utf8), "application/octet-stream", 400, "PDF document"),
            ("/v1/render", Data(), "image/heic", 400, "The body is empty"),
            ("/v1/render", heic.prefix(600), "image/heic", 400, "upload"),
            ("/v1/render", coffee.prefix(3000), "image/jpeg", 400, "truncated"),
            ("/v1/render", Data("hello".utf8), "text/plain", 415, "Content-Type text/plain"),
            ("/v1/render?max=2049", coffee, "image/jpeg", 400, "max must be a whole number of pixels from 1 to 2048"),
            ("/v1/render?max=0", coffee, "image/jpeg", 400, "not \"0\""),
            ("/v1/render?max=-5", coffee, "image/jpeg", 400, "not \"-5\""),
            ("/v1/render?max=99999999999999999999999", coffee, "image/jpeg", 400, "from 1 to 2048"),
            ("/v1/render?max=1e3", coffee, "image/jpeg", 400, "not \"1e3\""),
            ("/v1/render?max=%2B12", coffee, "image/jpeg", 400, "not \"+12\""),
            ("/v1/render?max=", coffee, "image/jpeg", 400, "from 1 to 2048"),
            ("/v1/render?max=10&max=20", coffee, "image/jpeg", 400, "max is given 2 times"),
            ("/v1/render?size=10", coffee, "image/jpeg", 400, "Unknown query parameter \"size\""),
        ]
        try await Self.with { server in
            for (path, body, type, status, message) in cases {
                let reply = try await server.request(path, method: "POST", body: body, contentType: type)
                let text = reply.json["error_description"] as? String ?? String(decoding: reply.body, as: UTF8.self)
                #expect(reply.status == status, "\(path) \(type ?? "-"): \(text)")
                #expect(text.contains(message), "\(path): \(text)")
            }
            // Still answering after all that.
            #expect(try await server.request("/v1/render", method: "POST", body: heic).status == 200)
        }
    }

    @Test("An album's HEIC and TIFF photos: render=jpeg answers the photo upright; bad values are 400")
    func album() async throws {
        let folder = try TemporaryFolder(prefix: "netrunner-render-album")
        defer { folder.remove() }
        let album = folder.path("phone")
        try FileManager.default.createDirectory(atPath: album, withIntermediateDirectories: true)
        for name in ["heic_irot.heic", "tiff_orientation6.tif"] {
            try FileManager.default.copyItem(atPath: Fixtures.path(Self.formats + name), toPath: album + "/" + name)
        }
        try Data("not a photo".utf8).write(to: URL(fileURLWithPath: album + "/broken.heic"))
        try await Self.with(album: album) { server in
            let files = (try await server.request("/v1/albums/phone").json["images"] as? [[String: Any]] ?? [])
                .compactMap { $0["file"] as? String }
            #expect(files == ["broken.heic", "heic_irot.heic", "tiff_orientation6.tif"])
            let photos = [(1, "heic_irot.heic", "image/heic"), (2, "tiff_orientation6.tif", "image/tiff")]
            for (index, name, type) in photos {
                let original = try await server.request("/v1/albums/phone/images/\(index)")
                #expect(original.body == (try Fixtures.data(Self.formats + name)), "the file as it is, unasked")
                #expect(original.headers["content-type"] == type, "\(name): its format's type in ImageFormat's table")
                let reply = try await server.request("/v1/albums/phone/images/\(index)?render=jpeg")
                #expect(reply.status == 200 && reply.headers["content-type"] == "image/jpeg", "\(name)")
                #expect(reply.headers["image-width"] == "97" && reply.headers["image-height"] == "131", "\(name)")
                let (mean, _) = Self.difference(
                    try Self.decoded(reply.body), try Self.decoded(try Fixtures.data(Self.formats + name)))
                #expect(mean < 5, "\(name): \(mean)")
                let small = try Self.decoded(
                    try await server.request("/v1/albums/phone/images/\(index)?render=jpeg&max=40").body)
                #expect(small.width == 30 && small.height == 40, "\(name): \(small)")
            }
            for (query, status, message) in [
                ("0?render=jpeg", 422, "broken.heic"), ("1?render=png", 400, "render takes one value, jpeg"),
                ("1?render=jpeg&max=4096", 400, "max must be"), ("1?max=40", 400, "max goes with render=jpeg"),
                ("7?render=jpeg", 404, "No image with this index"),
            ] {
                let reply = try await server.request("/v1/albums/phone/images/" + query)
                let text = reply.json["error_description"] as? String ?? ""
                #expect(reply.status == status && text.contains(message), "\(query): \(reply.status) \(text)")
            }
        }
    }

    /// The Content-Type of ``form(_:name:)``'s bodies.
    static let formType = "multipart/form-data; boundary=netrunner-test-boundary"

    /// A browser's form with the photo as its `image` file, as the page sends it.
    static func form(_ photo: Data, name: String) -> Data {
        var body = Data("--netrunner-test-boundary\r\n".utf8)
        body += Data("Content-Disposition: form-data; name=\"image\"; filename=\"\(name)\"\r\n".utf8)
        body += Data("Content-Type: application/octet-stream\r\n\r\n".utf8)
        body += photo
        body += Data("\r\n--netrunner-test-boundary--\r\n".utf8)
        return body
    }
}
