import ArgumentParser
import Foundation
import NetRunnerTestSupport
import Testing

@testable import NetRunnerNet

/// `netrunner hub key NAME` (issue 53): the guide once said `hub key create`, which made a key
/// named "create" and printed its secret. `hub key` has no verbs: a word of a command given as
/// the name is refused, before anything is sent, with the command's real form.
@Suite("hub key: a verb is not a key name")
struct HubKeyNameTests {
    @Test(
        "create, list, revoke, delete, show, help... are refused with the real syntax",
        arguments: ["create", "list", "revoke", "delete", "show", "help", "new", "rm", "Create"])
    func verbRefused(_ word: String) throws {
        #expect(throws: (any Error).self) { try NetRunnerNetCommand.Hub.Key.parse([word, "--scope", "publish"]) }
        do {
            _ = try NetRunnerNetCommand.Hub.Key.parse([word])
        } catch {
            let message = NetRunnerNetCommand.Hub.Key.message(for: error)
            #expect(message.contains("'\(word)' is a word of a command, not a key name"), "\(message)")
            #expect(message.contains("netrunner hub key NAME --scope read|publish|admin"), "\(message)")
        }
    }

    @Test("A name that says who uses the key is taken, verbs inside it too")
    func namesTaken() throws {
        for name in ["ci-publisher", "created-by-ci", "list-reader", "reader"] {
            let key = try NetRunnerNetCommand.Hub.Key.parse([name, "--scope", "read"])
            #expect(key.name == name)
        }
    }

    @Test("The command line refuses `hub key create` with exit status 64, sending nothing")
    func commandLine() async throws {
        // No hub at this address: a request would fail differently (connection refused).
        let result = try await OffPool.run {
            try ProcessResult.run(
                Fixtures.netrunner, ["hub", "key", "create", "--hub", "http://127.0.0.1:9"],
                environment: ["NETRUNNER_HUB_TOKEN": "t0ken"])
        }
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("'create' is a word of a command"), "\(result.stderr)")
        #expect(result.stdout.isEmpty, "\(result.stdout)")
    }
}
