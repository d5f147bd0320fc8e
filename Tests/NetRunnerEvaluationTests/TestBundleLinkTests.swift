import Foundation
import NetRunnerTestSupport
import Testing

@testable import NetRunnerEvaluation

/// A test bundle's images and its test.json are read only inside it: a link out is refused by
/// its name and where it points (issue 32, finding 5), links inside keep working.
@Suite("Test bundles: links that leave them")
struct TestBundleLinkTests {
    static let photo = "Tests/Fixtures/Photos/test/coffee.jpg"

    /// `t.testbundle` listing `images`, with `images/coffee.jpg` in it, and a secret beside it.
    static func layout(images: [String]) throws -> TemporaryFolder {
        let folder = try TemporaryFolder(prefix: "netrunner-testbundle-links")
        try FileManager.default.createDirectory(
            atPath: folder.path("t.testbundle/images"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Fixtures.path(photo), toPath: folder.path("t.testbundle/images/coffee.jpg"))
        try folder.write(Data("root:$6$SECRET-HASH:19000:0:99999:7:::\n".utf8), named: "shadow")
        let list = images.map { "{\"type\": \"file\", \"path\": \"\($0)\"}" }.joined(separator: ", ")
        let json = """
            {"name": "t", "id": "t", "version": "1", "models": ["m"],
             "options": {"iterations": 1, "metric": "EvaluationMetricAccuracyTop5"}, "images": [\(list)]}
            """
        try folder.write(Data(json.utf8), named: "t.testbundle/test.json")
        return folder
    }

    @Test("An image that links out is refused, naming the link and its target; one that links inside is read")
    func images() throws {
        let folder = try Self.layout(images: ["images/coffee.jpg", "images/link.jpg", "images/inside.jpg"])
        defer { folder.remove() }
        let bundle = folder.path("t.testbundle")
        try FileManager.default.createSymbolicLink(
            atPath: bundle + "/images/link.jpg", withDestinationPath: folder.path("shadow"))
        try FileManager.default.createSymbolicLink(
            atPath: bundle + "/images/inside.jpg", withDestinationPath: "coffee.jpg")
        let test = try TestBundle(path: bundle)
        let secret = URL(fileURLWithPath: folder.path("shadow")).resolvingSymlinksInPath().path
        let link = TestBundleDescription.ImageSource.file("images/link.jpg")
        #expect(test.localPath(of: link) == nil)
        #expect(
            test.refusal(of: link)
                == "images/link.jpg is a link to \(secret), outside the test bundle; refused")
        let inside = TestBundleDescription.ImageSource.file("images/inside.jpg")
        #expect(test.localPath(of: inside)?.hasSuffix("/t.testbundle/images/coffee.jpg") == true)
        #expect(test.refusal(of: inside) == nil)
        #expect(test.refusal(of: .file("../shadow"))?.contains("lies outside the test bundle") == true)
    }

    @Test("A test.json that links out of the bundle is refused, naming it and its target")
    func description() throws {
        let folder = try Self.layout(images: ["images/coffee.jpg"])
        defer { folder.remove() }
        let bundle = folder.path("t.testbundle")
        try FileManager.default.moveItem(atPath: bundle + "/test.json", toPath: folder.path("test.json"))
        try FileManager.default.createSymbolicLink(atPath: bundle + "/test.json", withDestinationPath: "../test.json")
        let target = URL(fileURLWithPath: folder.path("test.json")).resolvingSymlinksInPath().path
        #expect(
            throws: EvaluationError.invalidTest(
                file: bundle + "/test.json",
                reason: "test.json is a link to \(target), outside the test bundle; refused")
        ) { try TestBundle(path: bundle) }
    }
}
