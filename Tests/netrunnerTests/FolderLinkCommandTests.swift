import Foundation
import NetRunnerTestSupport
import Testing

/// Links that leave a folder read for others (issue 32, finding 5), as the commands meet them:
/// `hub push FOLDER` refuses before anything is sent; `serve --albums` never serves the file
/// a link out points at.
@Suite("Folders read for others: links that leave them, by command", .serialized)
struct FolderLinkCommandTests {
    static let bundle = "Tests/Fixtures/Bundles/mobilenet_v2_1.0_224_uint8.tfbundle"
    static let photo = "Tests/Fixtures/Photos/test/coffee.jpg"

    @Test("hub push FOLDER with a link to a key outside: refused, naming the link and its target, nothing sent")
    func push() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-push-link")
        defer { folder.remove() }
        let bundle = folder.path("m.tfbundle")
        try FileManager.default.copyItem(atPath: Fixtures.path(Self.bundle), toPath: bundle)
        let key = try folder.write(Data("-----BEGIN OPENSSH PRIVATE KEY-----\nSECRET\n".utf8), named: "id_ed25519")
        try FileManager.default.createSymbolicLink(atPath: bundle + "/assets/notes.txt", withDestinationPath: key)
        let real = URL(fileURLWithPath: key).resolvingSymlinksInPath().path
        // No hub listens there: the refusal comes before any connection.
        let result = try ProcessResult.run(
            Fixtures.netrunner, ["hub", "push", bundle, "--name", "m"],
            environment: ["NETRUNNER_HUB": "http://127.0.0.1:9", "NETRUNNER_HUB_TOKEN": "k"])
        #expect(result.status != 0)
        #expect(
            result.stderr.contains(
                "Cannot push \(bundle): assets/notes.txt is a link to \(real), outside the bundle folder; refused."),
            "\(result.stderr)")
        #expect(!result.stderr.contains("Cannot reach"), "\(result.stderr)")
    }

    @Test("serve --albums: an entry linking to /etc/passwd is left out (logged), never served; links inside are")
    func albums() async throws {
        let folder = try TemporaryFolder(prefix: "netrunner-album-link")
        defer { folder.remove() }
        let photos = folder.path("photos")
        try FileManager.default.createDirectory(atPath: photos, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Fixtures.path(Self.photo), toPath: photos + "/coffee.jpg")
        try FileManager.default.createSymbolicLink(atPath: photos + "/inside.jpg", withDestinationPath: "coffee.jpg")
        try FileManager.default.createSymbolicLink(atPath: photos + "/passwd.jpg", withDestinationPath: "/etc/passwd")
        try await LiveServer.serve(["--threads", "1", "--albums", photos]) { server in
            let list = try await server.request("/v1/albums").json
            let album = try #require((list["albums"] as? [[String: Any]])?.first)
            #expect(album["images"] as? Int == 2 && album["skipped"] as? Int == 1, "\(list)")
            let contents = try await server.request("/v1/albums/photos").json
            let files = (contents["images"] as? [[String: Any]] ?? []).compactMap { $0["file"] as? String }
            #expect(files == ["coffee.jpg", "inside.jpg"])
            let coffee = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path(Self.photo)))
            for index in 0..<3 {
                let reply = try await server.request("/v1/albums/photos/images/\(index)")
                #expect(!String(decoding: reply.body, as: UTF8.self).contains("root:"), "\(index)")
                #expect(reply.status == (index < 2 ? 200 : 404), "\(index)")
                if index < 2 { #expect(reply.body == coffee) }
            }
            #expect(
                server.log.contains("passwd.jpg is a link to /etc/passwd, outside the album; refused"), "\(server.log)")
        }
    }
}
