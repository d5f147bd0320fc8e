import Foundation
import NetRunnerTestSupport
import Testing

@testable import NetRunnerSupport

/// The one check of "does this path stay inside the folder, links included" that push, albums,
/// import, model bundles and test bundles share (issue 32, finding 5).
@Suite("Folders read for others: links that leave them")
struct ContainedFolderTests {
    /// A bundle-like folder beside a secret: `bundle/model.json`, `bundle/assets/labels.txt`,
    /// and `secret/id_ed25519` outside it.
    struct Layout {
        let folder: TemporaryFolder
        var bundle: String { folder.path("b.tiobundle") }
        var secret: String { folder.path("secret/id_ed25519") }
        /// The secret's real path (the temporary folder may lie behind a link).
        var realSecret: String { URL(fileURLWithPath: secret).resolvingSymlinksInPath().path }

        init() throws {
            folder = try TemporaryFolder(prefix: "netrunner-contained")
            let manager = FileManager.default
            try manager.createDirectory(atPath: folder.path("b.tiobundle/assets"), withIntermediateDirectories: true)
            try manager.createDirectory(atPath: folder.path("secret"), withIntermediateDirectories: true)
            try folder.write(Data("{}".utf8), named: "b.tiobundle/model.json")
            try folder.write(Data("cat\ndog\n".utf8), named: "b.tiobundle/assets/labels.txt")
            try folder.write(Data("-----BEGIN OPENSSH PRIVATE KEY-----\n".utf8), named: "secret/id_ed25519")
        }

        func link(_ name: String, to target: String) throws {
            try FileManager.default.createSymbolicLink(atPath: bundle + "/" + name, withDestinationPath: target)
        }
    }

    @Test("A link out is refused, naming the link and where it points; links inside keep working")
    func linkOut() throws {
        let layout = try Layout()
        defer { layout.folder.remove() }
        try layout.link("assets/notes.txt", to: layout.secret)
        try layout.link("assets/names.txt", to: "labels.txt")
        try layout.link("copy.json", to: "./assets/../model.json")
        let folder = try ContainedFolder(layout.bundle, name: "the bundle folder")

        let refusal = ContainedFolder.Refusal.linkOutside(
            link: "assets/notes.txt", target: layout.realSecret, kind: nil, folder: "the bundle folder")
        #expect(throws: refusal) { try folder.resolve("assets/notes.txt") }
        #expect(throws: refusal) { try folder.contents(of: "assets/notes.txt") }
        #expect(throws: refusal) { try folder.entries(includingHidden: false) }
        #expect(
            refusal.description
                == "assets/notes.txt is a link to \(layout.realSecret), outside the bundle folder; refused")

        // Inside: read through the link, as a file.
        #expect(try folder.contents(of: "assets/names.txt") == Data("cat\ndog\n".utf8))
        #expect(try folder.contents(of: "copy.json") == Data("{}".utf8))
        try FileManager.default.removeItem(atPath: layout.bundle + "/assets/notes.txt")
        let entries = try folder.entries(includingHidden: false)
        #expect(
            entries.map(\.relative) == ["assets", "assets/labels.txt", "assets/names.txt", "copy.json", "model.json"])
        #expect(entries.first { $0.relative == "assets/names.txt" }?.size == 8)
        #expect(entries.first { $0.relative == "assets" }?.isFolder == true)
    }

    @Test("A folder on the way that is a link out is the link named; .. and absolute paths are outside")
    func folderLinkAndSpelling() throws {
        let layout = try Layout()
        defer { layout.folder.remove() }
        try layout.link("keys", to: layout.folder.path("secret"))
        let folder = try ContainedFolder(layout.bundle + "/", name: "the bundle folder")
        let realFolder = URL(fileURLWithPath: layout.folder.path("secret")).resolvingSymlinksInPath().path
        #expect(
            throws: ContainedFolder.Refusal.linkOutside(
                link: "keys", target: realFolder, kind: nil, folder: "the bundle folder")
        ) { try folder.contents(of: "keys/id_ed25519") }
        // Listing: a link to a folder is not walked (inside or out), and says so.
        try FileManager.default.removeItem(atPath: layout.bundle + "/keys")
        try layout.link("more", to: "assets")
        #expect(throws: ContainedFolder.Refusal.linkToFolder(entry: "more")) {
            try folder.entries(includingHidden: false)
        }
        for spelled in ["../secret/id_ed25519", "/etc/passwd", "assets/../../secret/id_ed25519"] {
            #expect(throws: ContainedFolder.Refusal.outside(entry: spelled, folder: "the bundle folder")) {
                try folder.resolve(spelled)
            }
        }
        #expect(ContainedFolder.Refusal.outside(entry: "x", folder: "the album").leadsOutside)
    }

    @Test("A link to /dev/zero says it is a device outside; a link to a FIFO inside is not a file, and never blocks")
    func devicesAndPipes() throws {
        let layout = try Layout()
        defer { layout.folder.remove() }
        try layout.link("zero.bin", to: "/dev/zero")
        let folder = try ContainedFolder(layout.bundle, name: "the bundle folder")
        let zero = ContainedFolder.Refusal.linkOutside(
            link: "zero.bin", target: "/dev/zero", kind: "a character device", folder: "the bundle folder")
        #expect(throws: zero) { try folder.entries(includingHidden: false) }
        #expect(
            zero.description
                == "zero.bin is a link to /dev/zero (a character device), outside the bundle folder; refused")
        try FileManager.default.removeItem(atPath: layout.bundle + "/zero.bin")

        #expect(mkfifo(layout.bundle + "/assets/pipe", 0o600) == 0)
        try layout.link("pipe-link", to: "assets/pipe")
        #expect(
            throws: ContainedFolder.Refusal.notAFile(entry: "assets/pipe", kind: "a named pipe", throughLink: false)
        ) { try folder.entries(includingHidden: false) }
        let throughLink = ContainedFolder.Refusal.notAFile(entry: "pipe-link", kind: "a named pipe", throughLink: true)
        #expect(throws: throughLink) { try folder.contents(of: "pipe-link") }
        #expect(throughLink.description == "pipe-link is a link to a named pipe, not a regular file")
    }

    @Test("A dangling link is a link to nothing; hidden files are listed only when asked")
    func danglingAndHidden() throws {
        let layout = try Layout()
        defer { layout.folder.remove() }
        try layout.link("gone.tflite", to: "nowhere.tflite")
        let folder = try ContainedFolder(layout.bundle, name: "the bundle folder")
        let gone = ContainedFolder.Refusal.missing(
            entry: "gone.tflite", target: "nowhere.tflite", reason: "a link to nothing")
        #expect(throws: gone) { try folder.resolve("gone.tflite") }
        #expect(gone.description == "gone.tflite is a link to nothing (nowhere.tflite)")
        try FileManager.default.removeItem(atPath: layout.bundle + "/gone.tflite")
        try layout.folder.write(Data(), named: "b.tiobundle/.DS_Store")
        #expect(try !folder.entries(includingHidden: false).contains { $0.relative == ".DS_Store" })
        #expect(try folder.entries(includingHidden: true).contains { $0.relative == ".DS_Store" })
        #expect(throws: ContainedFolder.Refusal.tooLarge(entry: "model.json", byteCount: 2, limit: 1)) {
            try folder.contents(of: "model.json", maximumSize: 1)
        }
    }

    @Test("What was opened is checked by its descriptor: the real path, not the name")
    func openedPath() throws {
        let layout = try Layout()
        defer { layout.folder.remove() }
        try layout.link("labels-link.txt", to: "assets/labels.txt")
        let folder = try ContainedFolder(layout.bundle, name: "the bundle folder")
        let (descriptor, size) = try folder.open("labels-link.txt")
        defer { close(descriptor) }
        #expect(size == 8)
        #expect(ContainedFolder.path(of: descriptor) == folder.root + "/assets/labels.txt")
    }
}
