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

    /// The records the page shows, in its order: the order Finder and GNOME Files list files
    /// in (by path, folder by folder, numbers in names compared as numbers, `img_2` before
    /// `img_10`, letters without regard to case; the lines of one image in the file's order),
    /// the first ``maximumImages`` of them.
    ///
    /// - Parameter records: The results, in file order.
    /// - Returns: The records shown.
    public static func shown(_ records: [ResultsLine]) -> ArraySlice<ResultsLine> {
        NaturalPathOrder.sorted(records, by: \.image).prefix(maximumImages)
    }

    /// Renders the page, the records in the order of ``shown(_:)``.
    ///
    /// - Parameters:
    ///   - records: The results, in file order.
    ///   - thumbnails: Thumbnails by image path, byte for byte (images without one show a placeholder).
    ///   - title: The page's title (the results file's name).
    /// - Returns: The HTML.
    public static func render(_ records: [ResultsLine], thumbnails: [ExactString: Thumbnail], title: String) -> String {
        let shown = Self.shown(records)
        var entries: [Entry] = []
        for record in shown {
            var entry = Entry(image: record.image, error: record.error)
            if let thumbnail = thumbnails[ExactString(record.image)] {
                entry.thumbnail = thumbnail.dataURI
                entry.width = thumbnail.originalSize.width
                entry.height = thumbnail.originalSize.height
            }
            if let answer = record.answer {
                if let size = answer.imageSize {
                    entry.width = size.width
                    entry.height = size.height
                }
                entry.answers = answer.shownAnswers.map { .init(label: $0.label, score: $0.score, box: $0.box) }
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
        let failed = records.filter { $0.error != nil }.count
        let note =
            records.count > maximumImages
            ? "<p class=\"note\">Showing the first \(maximumImages) of \(records.count) images.</p>" : ""
        return fill(
            template,
            [
                "SCRIPT": script, "POLICY": policy,
                "TITLE": HTMLWriter.escape(title),
                "SUMMARY": "\(records.count) image\(records.count == 1 ? "" : "s"), \(failed) failed",
                "NOTE": note,
                "DATA": scriptSafe(json),
            ])
    }

    /// JSON made safe inside a `<script>` element: `<`, `>` and `&` as JSON's `\u` escapes (they
    /// occur only inside strings), so no file name can end the element (`</script>`) or switch
    /// the parser's state (`<!--<script>`).
    static func scriptSafe(_ json: String) -> String {
        var safe = ""
        safe.reserveCapacity(json.utf8.count)
        for character in json.unicodeScalars {
            switch character {
            case "<": safe += "\\u003c"
            case ">": safe += "\\u003e"
            case "&": safe += "\\u0026"
            default: safe.unicodeScalars.append(character)
            }
        }
        return safe
    }

    /// Fills `{{NAME}}` placeholders in one pass.
    ///
    /// What a value brings in (a file name holding `{{DATA}}`, say) is never itself filled.
    /// Unknown placeholders are left as they are.
    static func fill(_ template: String, _ values: [String: String]) -> String {
        var result = ""
        result.reserveCapacity(template.utf8.count)
        var rest = template[...]
        while let open = rest.firstRange(of: "{{") {
            result += rest[..<open.lowerBound]
            let afterOpen = rest[open.upperBound...]
            if let close = afterOpen.firstRange(of: "}}"), let value = values[String(afterOpen[..<close.lowerBound])] {
                result += value
                rest = afterOpen[close.upperBound...]
            } else {
                result += "{{"
                rest = afterOpen
            }
        }
        result += rest
        return result
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

    /// The page, `Resources/results-gallery.html`, whose script element gets
    /// `results-gallery.js` (both compiled into the library; `make lint` parses the script).
    static let template = String(decoding: PackageResources.results_gallery_html, as: UTF8.self)
    static let script = String(decoding: PackageResources.results_gallery_js, as: UTF8.self)

    /// The page's Content-Security-Policy: only its own script and style run (by their SHA-256),
    /// so even markup that got into the page could run nothing.
    static let policy: String = {
        let style = template.firstRange(of: "<style>").flatMap { open in
            template[open.upperBound...].firstRange(of: "</style>").map {
                String(template[open.upperBound..<$0.lowerBound])
            }
        }
        return "default-src 'none'; script-src '\(cspSource("\n" + script))'; style-src '\(cspSource(style ?? ""))'; "
            + "img-src data:; base-uri 'none'; form-action 'none'"
    }()

    /// A CSP source for an inline element's text: `sha256-` and its base64 digest.
    static func cspSource(_ text: String) -> String {
        "sha256-" + Data(SHA256.digest(of: Data(text.utf8))).base64EncodedString()
    }
}
