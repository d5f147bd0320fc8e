import ArgumentParser
import Foundation
import NetRunnerTestSupport
import Testing

@testable import NetRunnerNet

/// `hub serve --admin-key-file`: the first admin key read from a file, so that a service (the
/// Debian package's netrunner-hub.service) never puts it on a command line `ps` shows.
@Suite("hub serve --admin-key-file")
struct HubAdminKeyFileTests {
    func serve(_ arguments: [String]) throws -> NetRunnerNetCommand.Hub.Serve {
        try NetRunnerNetCommand.Hub.Serve.parse(["--data", "unused"] + arguments)
    }

    @Test("The key is the file's first line, a trailing CRLF or LF dropped")
    func firstLine() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-admin-key")
        defer { folder.remove() }
        for (text, expected) in [
            ("k3y-from-file\n", "k3y-from-file"), ("crlf-key\r\nignored\n", "crlf-key"), ("bare", "bare"),
        ] {
            let path = folder.path("admin.key")
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            #expect(try serve(["--admin-key-file", path]).adminKeyFromFile() == expected)
        }
        #expect(try serve([]).adminKeyFromFile() == nil)
    }

    @Test("An empty first line, a key with a space, a missing file, and both options are refused")
    func refused() throws {
        let folder = try TemporaryFolder(prefix: "netrunner-admin-key")
        defer { folder.remove() }
        for text in ["", "\nkey-on-second-line\n", "two words\n"] {
            let path = folder.path("admin.key")
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            #expect(throws: ValidationError.self) { try serve(["--admin-key-file", path]).makeHub() }
        }
        #expect(throws: (any Error).self) { try serve(["--admin-key-file", folder.path("missing")]).makeHub() }
        #expect(throws: (any Error).self) {
            try serve(["--admin-key", "a", "--admin-key-file", folder.path("admin.key")])
        }
    }
}
