import Foundation
import NetRunnerSupport
import NetRunnerTestSupport
import Testing

/// The folders NetRunner keeps what it trusts between runs in: checked as ssh checks `~/.ssh`.
@Suite("Private folders")
struct PrivateFolderTests {
    private static func mode(_ path: String) -> mode_t {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o7777 : 0
    }

    @Test("A new folder is made with its parents, mode 0700; a loose one of the user's is narrowed")
    func makesAndNarrows() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let nested = folder.path("cache/netrunner/model-checks")
        #expect(PrivateFolder.prepare(nested) == nil)
        #expect(Self.mode(nested) == 0o700)
        #expect(Self.mode(folder.path("cache")) == 0o700)
        chmod(nested, 0o777)
        #expect(PrivateFolder.prepare(nested) == nil)
        #expect(Self.mode(nested) == 0o700)
    }

    @Test("A folder above that others can write, a link or another user's folder is refused, named")
    func refusals() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let shared = folder.path("shared")
        #expect(PrivateFolder.prepare(shared + "/netrunner") == nil)
        chmod(shared, 0o777)
        #expect(
            PrivateFolder.prepare(shared + "/netrunner")
                == "\(shared), above \(shared)/netrunner, is writable by other users")
        // A root-owned sticky folder (as /tmp) is not a reason: others cannot replace what is in it.
        chmod(shared, 0o1777)
        #expect((PrivateFolder.prepare(shared + "/netrunner") == nil) == (geteuid() == 0))
        chmod(shared, 0o700)
        try FileManager.default.createSymbolicLink(atPath: folder.path("link"), withDestinationPath: shared)
        #expect(
            PrivateFolder.prepare(folder.path("link")) == "\(folder.path("link")) is not a folder (a link or a file)")
        if geteuid() == 0 {
            chown(shared + "/netrunner", 65_534, 65_534)
            #expect(
                PrivateFolder.prepare(shared + "/netrunner")
                    == "\(shared)/netrunner belongs to user 65534, not to this user")
            chown(shared, 65_534, 65_534)
            #expect(
                PrivateFolder.prepare(shared + "/mine")
                    == "\(shared), above \(shared)/mine, belongs to user 65534, who could replace what is in it")
        }
    }

    @Test("Only the user's own regular file, writable by no one else, is read")
    func ownFiles() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.write(Data("accepted\n".utf8), named: "verdict")
        chmod(file, 0o600)
        #expect(PrivateFolder.ownFileContents(file, maximumSize: 100) == Data("accepted\n".utf8))
        #expect(PrivateFolder.ownFileContents(file, maximumSize: 4) == nil)
        chmod(file, 0o622)
        #expect(PrivateFolder.ownFileContents(file, maximumSize: 100) == nil)
        chmod(file, 0o600)
        try FileManager.default.createSymbolicLink(atPath: folder.path("link"), withDestinationPath: file)
        #expect(PrivateFolder.ownFileContents(folder.path("link"), maximumSize: 100) == nil)
        #expect(PrivateFolder.ownFileContents(folder.path("missing"), maximumSize: 100) == nil)
        if geteuid() == 0 {
            chown(file, 65_534, 65_534)
            #expect(PrivateFolder.ownFileContents(file, maximumSize: 100) == nil)
        }
    }
}
