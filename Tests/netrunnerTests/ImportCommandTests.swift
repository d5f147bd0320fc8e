import Foundation
import NetRunnerTestSupport
import Testing

/// `netrunner import`: what a person types and reads, and what `evaluate` and `serve` then find.
@Suite("netrunner import")
struct ImportCommandTests {
    func netrunner(_ arguments: [String], in folder: TemporaryFolder) throws -> ProcessResult {
        try ProcessResult.run(Fixtures.netrunner, arguments, workingDirectory: folder.url.path)
    }

    @Test("A zipped bundle by URL lands in Models (the default), then classify and evaluate's folder find it")
    func byURL() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-import-cli")
        defer { folder.remove() }
        try FileManager.default.createDirectory(atPath: folder.path("site"), withIntermediateDirectories: true)
        let bundle = "Models/bundles/face_detection_short_range.tiobundle/"
        var files: [(String, Data)] = []
        for name in try FileManager.default.subpathsOfDirectory(atPath: Fixtures.path(bundle)).sorted() {
            var isFolder: ObjCBool = false
            FileManager.default.fileExists(atPath: Fixtures.path(bundle + name), isDirectory: &isFolder)
            if !isFolder.boolValue { files.append(("face.tiobundle/" + name, try Fixtures.data(bundle + name))) }
        }
        try ZipFixture.zip(files).write(to: URL(fileURLWithPath: folder.path("site/face.tiobundle.zip")))
        let site = try FileServer(folder: folder.path("site"))
        defer { site.stop() }

        let first = try netrunner(["import", site.url("face.tiobundle.zip")], in: folder)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(
            first.stdout.hasPrefix(
                "imported face-detection-short-range (\"Short Range Face Detection\", detector) into Models/face.tiobundle"
            ),
            "\(first.stdout)")
        #expect(first.stdout.contains("sha256 "))
        let detect = try netrunner(
            [
                "detect", "--model", "Models/face.tiobundle",
                Fixtures.path("Tests/Fixtures/Photos/faces/two_portraits.jpg"),
            ],
            in: folder)
        #expect(detect.status == 0 && detect.stdout.components(separatedBy: "  face  box").count == 3, "\(detect)")

        // Again: refused, exit 1, a message naming the id and the way out; the model untouched.
        let again = try netrunner(["import", site.url("face.tiobundle.zip")], in: folder)
        #expect(again.status == 1)
        #expect(again.stderr.contains("already installed at Models/face.tiobundle; replace it explicitly (--replace)"))
        let replaced = try netrunner(["import", site.url("face.tiobundle.zip"), "--replace"], in: folder)
        #expect(replaced.status == 0 && replaced.stdout.hasPrefix("replaced face-detection-short-range"))
    }

    @Test("A web page instead of a model: a clear error naming the URL, exit 1, nothing installed")
    func notAModel() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-import-cli")
        defer { folder.remove() }
        try FileManager.default.createDirectory(atPath: folder.path("site"), withIntermediateDirectories: true)
        try Data("<!doctype html><p>Please log in</p>".utf8).write(to: URL(fileURLWithPath: folder.path("site/m.zip")))
        let site = try FileServer(folder: folder.path("site"))
        defer { site.stop() }
        let run = try netrunner(["import", site.url("m.zip"), "--models", "Mine"], in: folder)
        #expect(run.status == 1)
        #expect(run.stderr.contains("Cannot import \(site.url("m.zip")): it is an HTML page"), "\(run.stderr)")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: folder.path("Mine"))) ?? []).isEmpty)
    }
}
