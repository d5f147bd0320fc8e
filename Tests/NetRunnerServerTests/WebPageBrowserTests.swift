import Foundation
import Hummingbird
import NetRunner
import NetRunnerEngine
import NetRunnerTestSupport
import Synchronization
import Testing

@testable import NetRunnerServer

/// serve's web page in headless Chromium (`tools/serve/page_check.py`) through what a new user
/// met: the page opened while every model was still loading listed them "(loading)", disabled,
/// forever, and the camera said "no model"; an iPhone's HEIC showed black, the skeleton floating
/// on nothing. The whole application on a real socket (127.0.0.1, port 0), its engine started
/// only once the page has shown the models loading.
@Suite("Web page in Chromium: models that load after it opens, photos the browser cannot draw")
struct WebPageBrowserTests {
    /// The first model served, so the one the page chooses once the models are ready.
    static let classifier = "mobilenet-v2-1.0-224-uint8"
    /// The pose estimator the check draws skeletons with.
    static let movenet = "movenet-single-pose-lightning-ptq"

    @Test("Models loading, then ready or failed, followed by the page; a HEIC, a TIFF and an album's HEIC shown")
    func page() async throws {
        _ = try BrowserPage.python()
        let folder = try TemporaryFolder(prefix: "netrunner-page-browser")
        defer { folder.remove() }
        let album = folder.path("phone")
        try FileManager.default.createDirectory(atPath: album, withIntermediateDirectories: true)
        for photo in [
            "Tests/Fixtures/Formats/heic_irot.heic", "Tests/Fixtures/Formats/tiff_orientation6.tif",
            "Tests/Fixtures/Photos/test/coffee.jpg",
        ] {
            try FileManager.default.copyItem(
                atPath: Fixtures.path(photo), toPath: album + "/" + (photo.split(separator: "/").last ?? ""))
        }
        // Three models that load and one that fails (no image model), in this order: the page
        // must choose the classifier, the first ready.
        let catalog = try ModelCatalog(embedded: [], folder: Fixtures.path("Models/bundles")).servedModels { _ in }
        let models =
            [Self.classifier, Self.movenet, "face-detection-short-range"].compactMap { id in
                catalog.first { $0.id == id }
            } + [
                // Its origin is its path, as serve's are: the page shows its file name only.
                ServedModel(
                    id: "half", model: try LoadedModel(.path(Fixtures.path(Fixtures.Synthetic.float16Input))),
                    origin: Fixtures.path(Fixtures.Synthetic.float16Input))
            ]
        #expect(models.count == 4)
        let engine = InferenceEngine(models: models, configuration: .init(threads: 2))
        let server = InferenceServer(
            engine: engine, configuration: .init(host: "127.0.0.1", port: 0, albums: [album]))
        let bound = Mutex<Int?>(nil)
        let app = try server.buildApplication(startsEngine: false) { _, port in bound.withLock { $0 = port } }
        let running = Task(executorPreference: ServerThreads.shared) {
            try await app.runService(gracefulShutdownSignals: [])
        }
        // Screenshots go to the repository's git-ignored out/ folder.
        let shots = Fixtures.path("out/heic-page")
        let marker = shots + "/loading-seen"
        let report: [String: Any]
        do {
            var port = 0
            try await Eventually.wait(for: "the server listening") {
                port = bound.withLock { $0 } ?? 0
                return port != 0
            }
            try? FileManager.default.removeItem(atPath: marker)
            let url = "http://127.0.0.1:\(port)/"
            let check = Task { try await BrowserPage.check("tools/serve/page_check.py", [url, shots, "3"]) }
            // The engine starts once the page has shown every model loading (or the check ended):
            // Chromium's start and the script's two waits before it (each up to 60 s under load,
            // tools/serve/page_check.py's SLACK) fit in the deadline.
            try await Eventually.wait(for: "the page showing the models loading", upTo: .seconds(600)) {
                FileManager.default.fileExists(atPath: marker)
            }
            #expect(engine.models.allSatisfy { engine.state(of: $0.id) == .loading })
            engine.start()
            report = try await check.value.json
        } catch {
            running.cancel()
            _ = await running.result
            await engine.shutdown()
            throw error
        }
        running.cancel()
        _ = await running.result
        await engine.shutdown()
        try Self.expectModels(report)
        try Self.expectPhotos(report)
        #expect((report["console_errors"] as? [String]) == [], "\(report["console_errors"] ?? "")")
        for name in [
            "models-loading.png", "models-ready.png", "heic-1280.png", "heic-390.png", "tiff-pose.png",
            "album-heic-1280.png", "album-heic-390.png",
        ] {
            #expect(FileManager.default.fileExists(atPath: shots + "/" + name), "\(name)")
        }
    }

    /// The options of the picker as the page showed them: id, text, disabled, selected, title.
    static func options(_ value: Any?) -> [(id: String, text: String, disabled: Bool, selected: Bool, title: String)] {
        (value as? [[String: Any]] ?? []).map {
            (
                $0["id"] as? String ?? "", $0["text"] as? String ?? "", $0["disabled"] as? Bool ?? false,
                $0["selected"] as? Bool ?? false, $0["title"] as? String ?? ""
            )
        }
    }

    /// Item B: loading, then ready or failed, the camera live once a model is.
    static func expectModels(_ report: [String: Any]) throws {
        let text = "\(report)"
        let loading = options(report["loading_options"])
        #expect(loading.count == 4 && loading.allSatisfy { $0.disabled && $0.text.hasSuffix(", loading)") }, "\(text)")
        #expect(report["loading_status"] as? String == "models loading…", "\(text)")
        #expect((report["loading_note"] as? String)?.hasPrefix("Loading 4 models: ") == true, "\(text)")
        #expect(report["loading_camera_running"] as? Bool == true, "\(text)")
        #expect(report["loading_camera_status"] as? String == "models loading…", "\(text)")

        let ready = options(report["ready_options"])
        #expect(ready.map(\.id) == [classifier, movenet, "face-detection-short-range", "half"], "\(text)")
        #expect(ready.filter { !$0.disabled }.map(\.id) == [classifier, movenet, "face-detection-short-range"])
        #expect(ready.first { $0.selected }?.id == classifier, "the first ready model is chosen: \(text)")
        let half = try #require(ready.last)
        #expect(
            half.disabled && half.text.hasSuffix(", failed)") && half.title.contains("not an image model"), "\(text)")
        let note = report["ready_note"] as? String ?? ""
        #expect(note.hasPrefix("half (half) failed to load: ") && note.contains("not an image model"), "\(note)")
        #expect(!note.contains("/"), "no path on this machine in the note: \(note)")
        // The camera started while nothing was ready runs on the model once it is.
        #expect(report["ready_live_status"] as? String == "live: \(classifier)", "\(text)")
        #expect((report["ready_frames"] as? Int ?? 0) >= 1, "\(text)")
        #expect((report["ready_answers"] as? [String])?.isEmpty == false, "\(text)")
        // The page stopped asking once no model was loading.
        let asked = report["model_requests_when_ready"] as? Int ?? 0
        #expect(asked >= 2 && report["model_requests_at_end"] as? Int == asked, "\(text)")
    }

    /// A picked or opened photo's figures: the image's natural size, how it was shown, its
    /// brightness and lit share, and the overlay's drawn pixels.
    static func photo(_ value: Any?) -> (width: Int, height: Int, by: String, mean: Double, lit: Double, drawn: Int) {
        let entry = value as? [String: Any] ?? [:]
        let photo = entry["photo"] as? [String: Any] ?? [:]
        return (
            photo["width"] as? Int ?? 0, photo["height"] as? Int ?? 0, photo["shownBy"] as? String ?? "",
            photo["mean"] as? Double ?? 0, photo["lit"] as? Double ?? 0,
            (entry["drawn"] as? [String: Any])?["count"] as? Int ?? 0
        )
    }

    /// Item A: the HEIC and the TIFF as the server renders them, upright and not black, with
    /// their answers drawn; a JPEG as the browser draws it; the album's HEIC the same.
    static func expectPhotos(_ report: [String: Any]) throws {
        let text = "\(report)"
        // heic_irot.heic: stored 131 x 97, turned by its irot: 97 x 131 upright.
        let heic = photo(report["heic"])
        #expect(heic.by == "server" && heic.width == 97 && heic.height == 131, "\(text)")
        #expect(heic.mean > 60 && heic.lit > 0.5, "not black: \(heic)")
        #expect(heic.drawn > 0, "the skeleton drawn: \(text)")
        #expect(((report["heic"] as? [String: Any])?["answers"] as? [String])?.contains("nose") == true, "\(text)")
        #expect(report["heic_390_overflow"] as? Int ?? 1 <= 0, "nothing wider than a phone: \(text)")
        let jpeg = photo(report["jpeg"])
        #expect(jpeg.by == "browser" && jpeg.width == 600 && jpeg.height == 400, "\(text)")
        #expect((((report["jpeg"] as? [String: Any])?["answers"] as? [String])?.first) == "espresso", "\(text)")
        let tiff = photo(report["tiff"])
        #expect(tiff.by == "server" && tiff.width == 500 && tiff.height == 610 && tiff.mean > 60, "\(text)")
        #expect(report["tiff_keypoints"] as? Int == 17 && tiff.drawn > 1000, "\(text)")

        let thumbnails = report["album_thumbnails"] as? [[Any]] ?? []
        #expect(thumbnails.count == 3 && thumbnails.allSatisfy { ($0.last as? Int ?? 0) > 0 }, "\(text)")
        let albumHEIC = photo(report["album_heic_irot.heic"])
        #expect(albumHEIC.by == "server" && albumHEIC.width == 97 && albumHEIC.height == 131, "\(text)")
        #expect(albumHEIC.mean > 60 && albumHEIC.lit > 0.5 && albumHEIC.drawn > 0, "\(albumHEIC)")
        let albumTIFF = photo(report["album_tiff_orientation6.tif"])
        #expect(albumTIFF.by == "server" && albumTIFF.width == 97 && albumTIFF.height == 131, "\(text)")
        let albumJPEG = photo(report["album_coffee.jpg"])
        #expect(albumJPEG.by == "browser" && albumJPEG.width == 600, "\(text)")
        #expect(report["album_heic_390_overflow"] as? Int ?? 1 <= 0, "\(text)")
    }
}
