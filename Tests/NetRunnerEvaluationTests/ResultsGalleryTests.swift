import Foundation
import NetRunnerTestSupport
import Testing

@testable import NetRunner
@testable import NetRunnerEvaluation

/// The results gallery is a page other people open: file names are the attacker's text.
@Suite("The results gallery against hostile file names")
struct ResultsGalleryTests {
    /// The names of issue 32's finding 3, each a failure record (no answer needed).
    static let names = [
        "<img src=x onerror=alert(1)>.jpg", "<!--<script>.jpg", "</script><script>alert(2)</script>.jpg",
        "{{TITLE}}.jpg", "a&b.jpg",
    ]

    static func page(title: String) -> String {
        let records = names.map { ResultsLine(image: "photos/" + $0, error: "cannot decode") }
        return ResultsGallery.render(records, thumbnails: [:], title: title)
    }

    /// The text of the page's only data element.
    static func data(_ html: String) throws -> String {
        let open = try #require(html.range(of: "<script type=\"application/json\" id=\"data\">"))
        let close = try #require(html[open.upperBound...].range(of: "</script>"))
        return String(html[open.upperBound..<close.lowerBound])
    }

    @Test("A results file named {{DATA}} gets its name as the title, not the results in the heading")
    func placeholderInTitle() throws {
        let html = Self.page(title: "{{DATA}}.jsonl")
        // Before the fix the title was filled first and then its {{DATA}} with the raw JSON.
        #expect(html.contains("<h1>{{DATA}}.jsonl</h1>"))
        #expect(html.contains("<title>{{DATA}}.jsonl</title>"))
        #expect(!html.contains("<img src=x"))
        #expect(html.components(separatedBy: "\"image\":").count == Self.names.count + 1)
    }

    @Test("No file name leaves the data element or changes how it is parsed, and the names round-trip")
    func namesStayData() throws {
        let html = Self.page(title: "results.jsonl")
        let data = try Self.data(html)
        #expect(!data.contains("<") && !data.contains(">") && !data.contains("&"))
        // The page's script reads the element's text as JSON: the names come back exactly.
        struct Entry: Decodable { var image: String }
        let entries = try JSONDecoder().decode([Entry].self, from: Data(data.utf8))
        // (In the page's order, the natural order of their paths.)
        #expect(entries.map(\.image).sorted() == Self.names.map { "photos/" + $0 }.sorted())
        // One data element, one script element, and nothing after the script but the end.
        #expect(html.components(separatedBy: "<script").count == 3)
        #expect(html.hasSuffix("</script></body></html>\n"))
    }

    @Test("The page's policy runs only its own script and style, by digest")
    func contentSecurityPolicy() throws {
        let html = Self.page(title: "results.jsonl")
        let start = try #require(html.range(of: "<meta http-equiv=\"Content-Security-Policy\" content=\""))
        let end = try #require(html[start.upperBound...].firstIndex(of: "\""))
        let policy = String(html[start.upperBound..<end])
        #expect(policy.hasPrefix("default-src 'none'; script-src 'sha256-"))
        #expect(!policy.contains("unsafe-inline"))
        // The digest is that of the script element's text as the browser sees it.
        let scriptOpen = try #require(html.range(of: "<script>"))
        let scriptClose = try #require(html[scriptOpen.upperBound...].range(of: "</script>"))
        let script = Data(html[scriptOpen.upperBound..<scriptClose.lowerBound].utf8)
        #expect(policy.contains("script-src '\(ResultsGallery.cspSource(String(decoding: script, as: UTF8.self)))'"))
        let styleOpen = try #require(html.range(of: "<style>"))
        let styleClose = try #require(html[styleOpen.upperBound...].range(of: "</style>"))
        #expect(
            policy.contains(
                "style-src '\(ResultsGallery.cspSource(String(html[styleOpen.upperBound..<styleClose.lowerBound])))'"))
    }

    @Test("Images are shown in natural order: img_2 before img_10, folder by folder, any case")
    func naturalOrder() throws {
        let files = [
            "photos/img_10.jpg", "photos/img_2.jpg", "photos/IMG_3.jpg", "photos/img_1.jpg", "photos/b/img_1.jpg",
            "photos/img_02.jpg", "photos/a10/x.jpg", "photos/a9/x.jpg", "photos/img_100.jpg",
        ]
        let html = ResultsGallery.render(
            files.map { ResultsLine(image: $0, error: "cannot decode") }, thumbnails: [:], title: "r.jsonl")
        struct Entry: Decodable { var image: String }
        let shown = try JSONDecoder().decode([Entry].self, from: Data(Self.data(html).utf8)).map(\.image)
        #expect(
            shown == [
                "photos/a9/x.jpg", "photos/a10/x.jpg", "photos/b/img_1.jpg", "photos/img_1.jpg", "photos/img_02.jpg",
                "photos/img_2.jpg", "photos/IMG_3.jpg", "photos/img_10.jpg", "photos/img_100.jpg",
            ])
        // What `report` makes thumbnails for is what the page shows.
        let records = files.map { ResultsLine(image: $0, error: "x") }
        #expect(ResultsGallery.shown(records).map(\.image) == shown)
    }

    @Test(
        "The natural order: numbers by value at any length, case and leading zeros only break ties, lines of one image kept in order"
    )
    func naturalOrderRules() {
        let sorted = [
            "x99999999999999999999999.jpg", "x2.jpg", "X2.jpg", "x-1.jpg", "x 1.jpg", "x.jpg", "x1b.jpg", "x1a.jpg",
            "x0.jpg", "x1.jpg",
        ].sorted(by: NaturalPathOrder.areInIncreasingOrder)
        #expect(
            sorted == [
                "x 1.jpg", "x-1.jpg", "x.jpg", "x0.jpg", "x1.jpg", "x1a.jpg", "x1b.jpg", "X2.jpg", "x2.jpg",
                "x99999999999999999999999.jpg",
            ])
        let lines = [
            ResultsLine(image: "b10", iteration: 1, error: "e"), ResultsLine(image: "b2", iteration: 2, error: "e"),
            ResultsLine(image: "b10", iteration: 2, error: "e"), ResultsLine(image: "b2", iteration: 1, error: "e"),
        ]
        #expect(
            NaturalPathOrder.sorted(lines, by: \.image).map { "\($0.image)#\($0.iteration ?? 0)" }
                == ["b2#2", "b2#1", "b10#1", "b10#2"])
    }

    @Test("One-pass filling leaves what a value brings in untouched")
    func onePass() {
        #expect(ResultsGallery.fill("{{A}}-{{B}}", ["A": "{{B}}", "B": "x"]) == "{{B}}-x")
        #expect(ResultsGallery.fill("{{A}} {{ {{C}}", ["A": "1"]) == "1 {{ {{C}}")
    }
}
