import FoundationEssentials
public import NetRunner
public import NetRunnerImage
import NetRunnerSupport

/// A browsable page of bulk results.
///
/// Net Runner's "view the results in bulk and individually": every image as a thumbnail with its best answer, filtered by label, score
/// or failure, and any one opened with all its answers, its latencies and, for detectors, its
/// boxes drawn over it. One self-contained HTML file: thumbnails inline, no network.
public enum ResultsGallery {
    /// The most images a page shows (a note says how many were left out).
    public static let maximumImages = 10_000

    /// Renders the page.
    ///
    /// - Parameters:
    ///   - records: The results, in file order.
    ///   - thumbnails: Thumbnails by image path (images without one show a placeholder).
    ///   - title: The page's title (the results file's name).
    /// - Returns: The HTML.
    public static func render(_ records: [BulkRecord], thumbnails: [String: Thumbnail], title: String) -> String {
        let shown = records.prefix(maximumImages)
        var entries: [Entry] = []
        for record in shown {
            var entry = Entry(image: record.image, error: record.error)
            if let thumbnail = thumbnails[record.image] {
                entry.thumbnail = thumbnail.dataURI
                entry.width = thumbnail.originalSize.width
                entry.height = thumbnail.originalSize.height
            }
            switch record.answer {
            case .classification(let result)?:
                entry.answers = result.categories.map {
                    .init(label: $0.displayName ?? $0.label ?? "class \($0.index)", score: $0.score, box: nil)
                }
            case .detection(let result)?:
                entry.width = result.imageWidth
                entry.height = result.imageHeight
                entry.answers = result.detections.map { detection in
                    let box = detection.boundingBox
                    let best = detection.categories.first
                    return .init(
                        label: best?.displayName ?? best?.label ?? "class \(best?.index ?? 0)", score: detection.score,
                        box: [box.minX, box.minY, box.width, box.height])
                }
            case nil:
                break
            }
            if let answer = record.answer {
                entry.latency = [
                    answer.decodingMilliseconds, answer.preprocessingMilliseconds, answer.inferenceMilliseconds,
                ]
            }
            entries.append(entry)
        }
        let encoder = JSONCoding.encoder()
        let json = (try? encoder.encode(entries)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
        // Inside <script>, "</" would end the element: JSON allows "<\/".
        let data = json.replacing("</", with: "<\\/")
        let failed = records.filter { $0.error != nil }.count
        let note =
            records.count > maximumImages
            ? "<p class=\"note\">Showing the first \(maximumImages) of \(records.count) images.</p>" : ""
        return page.replacing("{{TITLE}}", with: HTMLWriter.escape(title))
            .replacing(
                "{{SUMMARY}}",
                with: "\(records.count) image\(records.count == 1 ? "" : "s"), \(failed) failed"
            )
            .replacing("{{NOTE}}", with: note)
            .replacing("{{DATA}}", with: data)
    }

    struct Entry: Encodable {
        struct Answer: Encodable {
            var label: String
            var score: Float
            var box: [Float]?
        }
        var image: String
        var error: String?
        var thumbnail: String?
        var width: Int?
        var height: Int?
        var answers: [Answer] = []
        var latency: [Double]?
    }

    /// The page: `Resources/results-gallery.html` with `results-gallery.js` in its script
    /// element (compiled into the library; `make lint` parses the script).
    static let page = String(decoding: PackageResources.results_gallery_html, as: UTF8.self)
        .replacing("{{SCRIPT}}", with: String(decoding: PackageResources.results_gallery_js, as: UTF8.self))
}
