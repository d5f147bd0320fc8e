import Foundation
import NIOCore
import NetRunnerTestSupport
import Testing

@testable import NetRunnerHub

/// `hub push FOLDER` publishes what the folder holds, never what a link in it points at
/// elsewhere (issue 32, finding 5), and says what a link to a device really is (finding 9).
@Suite("Hub push of a folder: links that leave it")
struct BundleZipLinkTests {
    /// A bundle folder (`b.tiobundle`: model.json, model.tflite, assets/labels.txt) and a secret
    /// beside it.
    struct Layout {
        let folder: TemporaryFolder
        var bundle: String { folder.path("b.tiobundle") }
        var secret: String { folder.path("id_ed25519") }
        var realSecret: String { URL(fileURLWithPath: secret).resolvingSymlinksInPath().path }

        init() throws {
            folder = try TemporaryFolder(prefix: "netrunner-push-links")
            try FileManager.default.createDirectory(
                atPath: folder.path("b.tiobundle/assets"), withIntermediateDirectories: true)
            try folder.write(Data("{\"id\": \"b\"}".utf8), named: "b.tiobundle/model.json")
            try folder.write(Data(repeating: 7, count: 1000), named: "b.tiobundle/model.tflite")
            try folder.write(Data("cat\ndog\n".utf8), named: "b.tiobundle/assets/labels.txt")
            try folder.write(Data("-----BEGIN OPENSSH PRIVATE KEY-----\nSECRET\n".utf8), named: "id_ed25519")
        }

        func link(_ name: String, to target: String) throws {
            try FileManager.default.createSymbolicLink(atPath: bundle + "/" + name, withDestinationPath: target)
        }
    }

    /// The whole archive, as the push would send it.
    static func archive(_ zip: BundleZip) async throws -> Data {
        var data = Data()
        for try await buffer in zip { data.append(contentsOf: buffer.readableBytesView) }
        return data
    }

    @Test("A link to a file outside the folder is refused before anything is sent, naming it and its target")
    func linkOut() throws {
        let layout = try Layout()
        defer { layout.folder.remove() }
        try layout.link("assets/notes.txt", to: layout.secret)
        #expect(
            throws: HubClientError.cannotPush(
                path: layout.bundle,
                reason: "assets/notes.txt is a link to \(layout.realSecret), outside the bundle folder; refused")
        ) { try BundleZip(folder: layout.bundle) }
        let message = "\(HubClientError.cannotPush(path: layout.bundle, reason: "assets/notes.txt is a link"))"
        #expect(message.hasPrefix("Cannot push \(layout.bundle): assets/notes.txt"))
    }

    @Test("A folder on the way that links out, and a link to /dev/zero, are named for what they are")
    func folderLinkAndDevice() throws {
        let layout = try Layout()
        defer { layout.folder.remove() }
        try layout.link("zero.bin", to: "/dev/zero")
        #expect(
            throws: HubClientError.cannotPush(
                path: layout.bundle,
                reason: "zero.bin is a link to /dev/zero (a character device), outside the bundle folder; refused")
        ) { try BundleZip(folder: layout.bundle) }
        try FileManager.default.removeItem(atPath: layout.bundle + "/zero.bin")
        try layout.link("keys", to: layout.folder.url.path)
        #expect(
            throws: HubClientError.cannotPush(
                path: layout.bundle,
                reason:
                    "keys is a link to \(layout.folder.url.resolvingSymlinksInPath().path), outside the bundle folder; refused"
            )
        ) { try BundleZip(folder: layout.bundle) }
    }

    @Test("Links that stay inside keep working: the file behind one is pushed as a file")
    func linkInside() async throws {
        let layout = try Layout()
        defer { layout.folder.remove() }
        try layout.link("assets/names.txt", to: "labels.txt")
        let zip = try BundleZip(folder: layout.bundle)
        #expect(
            zip.members.map { String(decoding: $0.name, as: UTF8.self) } == [
                "b.tiobundle/assets/labels.txt", "b.tiobundle/assets/names.txt", "b.tiobundle/model.json",
                "b.tiobundle/model.tflite",
            ])
        let data = try await Self.archive(zip)
        #expect(data.count == zip.length)
        #expect(data.range(of: Data("cat\ndog\n".utf8)) != nil)
    }

    @Test("A file swapped for a link out after the folder was listed is refused as it is opened")
    func swappedAfterListing() async throws {
        let layout = try Layout()
        defer { layout.folder.remove() }
        let zip = try BundleZip(folder: layout.bundle)
        try FileManager.default.removeItem(atPath: layout.bundle + "/assets/labels.txt")
        try layout.link("assets/labels.txt", to: layout.secret)
        await #expect(
            throws: HubClientError.cannotPush(
                path: layout.bundle,
                reason: "assets/labels.txt is a link to \(layout.realSecret), outside the bundle folder; refused")
        ) { _ = try await Self.archive(zip) }
    }
}
