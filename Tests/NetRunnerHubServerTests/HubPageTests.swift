import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import NetRunnerSupport
import NetRunnerTestSupport
import Testing

@testable import NetRunnerHubServer

/// The hub's page in process: the files of `Resources/` as one page, and a policy that lets
/// exactly its own style and script run. The page itself runs in Chromium in
/// `HubPageManageTests`.
@Suite("Hub page: its files")
struct HubPageTests {
    static func resource(_ name: String) throws -> String {
        try String(contentsOfFile: Fixtures.path("Sources/NetRunnerHubServer/Resources/" + name), encoding: .utf8)
    }

    /// The text of the first `<element>` of `page`.
    static func text(of element: String, in page: String) throws -> String {
        let open = try #require(page.range(of: "<\(element)>"))
        let close = try #require(page.range(of: "</\(element)>", range: open.upperBound..<page.endIndex))
        return String(page[open.upperBound..<close.lowerBound])
    }

    @Test("/ is Resources/hub.html with hub.css and the hub's scripts inlined; its policy allows their digests only")
    func page() async throws {
        let script = try ["hub.js", "hub-gates.js", "hub-experiments.js"].map(Self.resource).joined(separator: "\n")
        let expected = try Self.resource("hub.html")
            .replacingOccurrences(of: "{{STYLE}}", with: try Self.resource("hub.css"))
            .replacingOccurrences(of: "{{SCRIPT}}", with: script)
        // `hub serve`'s application, its middleware included.
        try await HubRoutesTests.withHub { client, _ in
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                let page = String(buffer: response.body)
                #expect(page == expected)
                let policy = try #require(response.headers[.contentSecurityPolicy])
                for element in ["script", "style"] {
                    let text = try Self.text(of: element, in: page)
                    #expect(text.count > 1000, "\(element)")
                    let digest = "sha256-" + Data(SHA256.digest(of: Data(text.utf8))).base64EncodedString()
                    #expect(policy.contains("\(element)-src '\(digest)';"), "\(policy)")
                }
            }
        }
    }
}
