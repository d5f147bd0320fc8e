import Foundation
import NetRunnerHub
import Testing

/// The hub's address is the user's text: its password never shows, odd addresses are refused.
@Suite("The hub's address")
struct HubAddressTests {
    @Test("A password in the hub's address is masked in every message")
    func maskedPassword() async throws {
        let hub = "http://alice:s3cret@127.0.0.1:1"
        // Nothing listens on port 1: "Cannot reach".
        await #expect {
            _ = try await HubClient(address: hub).models()
        } throws: { error in
            let text = "\(error)"
            return text.contains("Cannot reach the hub at http://***@127.0.0.1:1") && !text.contains("s3cret")
        }
        let refused = HubClientError.refused(hub: hub, status: 404, message: "no model named x")
        #expect(refused.description == "The hub at http://***@127.0.0.1:1 answered 404: no model named x")
        let tooLarge = HubClientError.tooLarge(hub: hub, name: "m", size: 2, limit: 1)
        #expect(!tooLarge.description.contains("s3cret"))
    }

    @Test(
        "An address with a query or fragment, or no http(s) host, is refused before any request",
        arguments: [
            "http://127.0.0.1:8090/?q=", "http://127.0.0.1:8090/#x", "ftp://127.0.0.1", "http://:8090",
        ])
    func oddAddresses(address: String) async throws {
        await #expect {
            _ = try await HubClient(address: address).models()
        } throws: { error in
            "\(error)".contains("that is not a hub address")
        }
    }

    @Test("hub:@REF names no model")
    func emptyName() {
        #expect(CustomRemoteModel.parse("hub:@x") == nil)
        #expect(CustomRemoteModel.parse("hub:flowers@")?.reference == "latest")
        #expect(CustomRemoteModel.parse("hub:flowers@7")?.name == "flowers")
    }
}
