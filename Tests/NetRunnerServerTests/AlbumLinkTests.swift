import Foundation
import NetRunnerTestSupport
import Testing

@testable import NetRunnerServer

/// `serve --albums DIR` offers what the folder holds, never what a link in it points at
/// elsewhere (issue 32, finding 5): such an entry is left out, and one swapped in later is
/// refused as it is read.
@Suite("Albums: links that leave the folder")
struct AlbumLinkTests {
    static let photo = "Tests/Fixtures/Photos/test/coffee.jpg"

    /// `photos/` with `coffee.jpg`, `inside.jpg -> coffee.jpg`, `passwd.jpg -> /etc/passwd`
    /// and `outside.jpg` linking to a photo outside the album.
    static func layout() throws -> TemporaryFolder {
        let folder = try TemporaryFolder(prefix: "netrunner-album-links")
        let manager = FileManager.default
        try manager.createDirectory(atPath: folder.path("photos"), withIntermediateDirectories: true)
        try manager.copyItem(atPath: Fixtures.path(photo), toPath: folder.path("photos/coffee.jpg"))
        try manager.copyItem(atPath: Fixtures.path(photo), toPath: folder.path("private.jpg"))
        try manager.createSymbolicLink(atPath: folder.path("photos/inside.jpg"), withDestinationPath: "coffee.jpg")
        try manager.createSymbolicLink(atPath: folder.path("photos/passwd.jpg"), withDestinationPath: "/etc/passwd")
        try manager.createSymbolicLink(
            atPath: folder.path("photos/outside.jpg"), withDestinationPath: folder.path("private.jpg"))
        return folder
    }

    @Test("Entries that link out are left out and counted as skipped; links inside are offered and read")
    func load() throws {
        let folder = try Self.layout()
        defer { folder.remove() }
        let albums = AlbumRoutes.Album.load([folder.path("photos")])
        let album = try #require(albums.first)
        #expect(album.files.indices.map(album.relative) == ["coffee.jpg", "inside.jpg"])
        #expect(album.skipped == 2)
        let coffee = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path(Self.photo)))
        #expect(try album.read(0, maximumSize: 1 << 26) == coffee)
        #expect(try album.read(1, maximumSize: 1 << 26) == coffee)
        #expect(album.resolved(1)?.hasSuffix("/photos/coffee.jpg") == true)
    }

    @Test("An image swapped for a link out after the album was listed is refused, its target never named")
    func swapped() throws {
        let folder = try Self.layout()
        defer { folder.remove() }
        let album = try #require(AlbumRoutes.Album.load([folder.path("photos")]).first)
        try FileManager.default.removeItem(atPath: folder.path("photos/coffee.jpg"))
        try FileManager.default.createSymbolicLink(
            atPath: folder.path("photos/coffee.jpg"), withDestinationPath: "/etc/passwd")
        #expect(throws: AlbumRoutes.AlbumReadError.self) { try album.read(0, maximumSize: 1 << 26) }
        do {
            _ = try album.read(0, maximumSize: 1 << 26)
        } catch {
            #expect(error.message == "coffee.jpg: not read, it leads outside the album")
        }
        #expect(album.resolved(0) == nil)
    }
}
