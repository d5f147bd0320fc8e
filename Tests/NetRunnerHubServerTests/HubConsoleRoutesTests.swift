import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NetRunnerTestSupport
import Testing

@testable import NetRunnerHubServer

/// What the hub's page relies on to delete versions and manage keys, in process: the routes
/// `netrunner hub delete` and `hub key` use, answering as the page expects. The page itself
/// runs in Chromium in `HubPageManageTests`.
@Suite("Hub routes the page's delete and keys use")
struct HubConsoleRoutesTests {
    @Test("DELETE of a version: admin only, refused while an alias points to it, then gone")
    func deleteVersion() async throws {
        try await HubRoutesTests.withHub { client, _ in
            let call = { (uri: String, method: HTTPRequest.Method, headers: HTTPFields, body: String?) in
                try await HubRoutesTests.call(client, uri, method: method, headers: headers, body: body)
            }
            let admin = HubRoutesTests.adminHeaders
            _ = try await call("/v1/models/m/aliases/production", .put, admin, #"{"version":1}"#)
            let made = try await call("/v1/keys", .post, admin, #"{"name":"ci","scope":"publish"}"#)
            let publisher: HTTPFields = [
                .authorization: "Bearer \(try #require(HubRoutesTests.json(made.body)["key"] as? String))"
            ]
            let refused = try await call("/v1/models/m/versions/2", .delete, publisher, nil)
            #expect(refused.status == 403)
            #expect(
                HubRoutesTests.json(refused.body)["error_description"] as? String
                    == #"The key "ci" has the publish scope; this needs admin."#)
            let aliased = try await call("/v1/models/m/versions/1", .delete, admin, nil)
            #expect(aliased.status == 409)
            #expect(
                HubRoutesTests.json(aliased.body)["error_description"] as? String
                    == "version 1 of m is what production points to; move the alias first")
            let deleted = try await call("/v1/models/m/versions/2", .delete, admin, nil)
            #expect(deleted.status == 200 && HubRoutesTests.json(deleted.body)["deleted"] as? String == "m@2")
            #expect(try await call("/v1/models/m/versions/2", .get, [:], nil).status == 404)
            #expect(try await call("/v1/models/m/versions/2", .delete, admin, nil).status == 404)
            let model = HubRoutesTests.json(try await call("/v1/models/m", .get, [:], nil).body)
            #expect((model["versions"] as? [[String: Any]])?.compactMap { $0["version"] as? Int } == [1])
            #expect(model["latest_version"] as? Int == 1)
        }
    }

    @Test("Keys: listed without secrets for an admin only (403 otherwise); a revoked key is 401")
    func keys() async throws {
        try await HubRoutesTests.withHub { client, _ in
            let call = { (uri: String, method: HTTPRequest.Method, headers: HTTPFields, body: String?) in
                try await HubRoutesTests.call(client, uri, method: method, headers: headers, body: body)
            }
            let admin = HubRoutesTests.adminHeaders
            let made = try await call("/v1/keys", .post, admin, #"{"name":"laptop","scope":"read"}"#)
            #expect(made.status == 201)
            let secret = try #require(HubRoutesTests.json(made.body)["key"] as? String)
            let laptop: HTTPFields = [.authorization: "Bearer \(secret)"]
            #expect(try await call("/v1/keys", .get, laptop, nil).status == 403)
            let listed = try await call("/v1/keys", .get, admin, nil)
            #expect(listed.status == 200)
            let keys = HubRoutesTests.json(listed.body)["keys"] as? [[String: Any]] ?? []
            #expect(keys.compactMap { $0["name"] as? String } == ["admin", "laptop"])
            #expect(keys.allSatisfy { Set($0.keys) == ["name", "scope", "created_at"] }, "no secret, no digest")
            let text = String(decoding: listed.body, as: UTF8.self)
            #expect(!text.contains(secret) && !text.contains(HubRoutesTests.admin))
            #expect(try await call("/v1/models/m", .get, laptop, nil).status == 200)
            #expect(try await call("/v1/keys/laptop", .delete, admin, nil).status == 200)
            #expect(try await call("/v1/models/m", .get, laptop, nil).status == 401)
            #expect(try await call("/v1/keys/laptop", .delete, admin, nil).status == 404)
        }
    }
}
