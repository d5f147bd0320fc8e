import Foundation
import NetRunnerTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `serve`'s access control as an attacker tries it over real sockets: the API key against
/// paths spelled every way the router still routes, empty keys, cross-site pages and DNS
/// rebinding. The server runs in process (``LiveServer``: the command's own application on a
/// real socket); only the refusals at start run the command. (Paths shown in the model list,
/// metrics labels from random paths and album runs that would starve the rest are tested on the
/// router: `NetRunnerServerTests`.)
@Suite("netrunner serve: access", .serialized)
struct ServeAccessTests {
    static let photos = Fixtures.path("Tests/Fixtures/Photos/test")
    static let classifier = "mobilenet-v2-1.0-224-uint8"

    /// The spellings of a path a router may route as the path itself: doubled slashes, dot
    /// segments, an encoded slash, upper case, a trailing slash.
    static func variants(of path: String) -> [String] {
        let (route, query): (String, String) = {
            guard let mark = path.firstIndex(of: "?") else { return (path, "") }
            return (String(path[..<mark]), String(path[mark...]))
        }()
        let parts = route.split(separator: "/").map(String.init)
        var spelled: [String] = ["/" + route, route + "/", route.uppercased(), "/." + route]
        for index in 1..<parts.count {
            let head = "/" + parts[..<index].joined(separator: "/")
            let tail = parts[index...].joined(separator: "/")
            spelled += [head + "//" + tail, head + "/./" + tail, head + "%2F" + tail, head + "%2f" + tail]
        }
        spelled.append(route.replacing("/", with: "%2F"))
        return spelled.map { $0 + query }
    }

    @Test("The API key holds whatever the spelling of the path: //, /./, %2F, case, trailing slash (401, 404 or 400)")
    func keyOnEverySpelling() async throws {
        let folder = try TemporaryFolder(prefix: "netrunner-access")
        defer { folder.remove() }
        let clip = try VideoClips.faces(in: folder.url.path)
        let models = folder.url.appendingPathComponent("models").path
        try FileManager.default.createDirectory(atPath: models, withIntermediateDirectories: true)
        try await LiveServer.serve(
            ["--threads", "1", "--api-key", "s3cret", "--albums", Self.photos, "--stream", "cam=" + clip],
            models: models
        ) { server in
            let port = server.port
            let key = ["Authorization": "Bearer s3cret"]
            let run = try await server.request(
                "/v1/albums/test/runs?model=\(Self.classifier)", method: "POST", headers: key)
            #expect(run.status == 202)
            let runID = try #require(run.json["id"] as? String)
            // The stream has a frame before its frame is asked for.
            try await Eventually.wait(for: "the stream's first frame", upTo: .seconds(120)) {
                try await server.request("/v1/streams/cam/frame.jpg", headers: key).status == 200
            }
            let protected = [
                "/v1/albums", "/v1/albums/test", "/v1/albums/test/images/1", "/v1/albums/test/images/1?thumbnail=1",
                "/v1/runs/\(runID)", "/v1/imports", "/v1/streams", "/v1/streams/cam", "/v1/streams/cam/frame.jpg",
            ]
            for path in protected {
                #expect(try await RawHTTP.get(port: port, path, headers: key).status == 200, "\(path) with the key")
                #expect(try await RawHTTP.get(port: port, path).status == 401, "\(path) without a key")
                for spelled in Self.variants(of: path) {
                    let reply = try await RawHTTP.get(port: port, spelled)
                    // 400: a request target that does not start with "/" is malformed.
                    #expect([400, 401, 404].contains(reply.status), "\(spelled): \(reply.text.prefix(300))")
                }
            }
            // POSTs, whatever the spelling.
            for spelled in Self.variants(of: "/v1/imports") + Self.variants(of: "/v1/albums/test/runs") {
                let body = #"{"url": "http://127.0.0.1:9/x.tflite"}"#
                let reply = try await RawHTTP.exchange(
                    port: port,
                    "POST \(spelled)?model=\(Self.classifier) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                        + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
                #expect([400, 401, 404].contains(reply.status), "POST \(spelled): \(reply.text.prefix(300))")
            }
            // ?key= is for the live socket only; an empty one is no key.
            #expect(try await RawHTTP.get(port: port, "/v1/albums/test/images/1?key=s3cret").status == 401)
            #expect(try await RawHTTP.get(port: port, "/v1/albums?key=").status == 401)
            // What stays open.
            for path in [
                "/", "/v1/models", "/v2/health/ready", "/openapi.json", "/metrics", "//v1/models",
                "/v2/models/\(Self.classifier)", "/v2/models/\(Self.classifier)/config", "/v2/repository/index",
            ] {
                #expect(try await RawHTTP.get(port: port, path).status == 200, "\(path) needs no key")
            }
        }
    }

    /// `serve` with `arguments`, which must refuse to start: its exit status and standard error,
    /// or a failure if it is still running after 20 s (then it is killed).
    func refusedStart(_ arguments: [String]) throws -> (status: Int32, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixtures.netrunner)
        process.arguments = ["serve", "--port", "0"] + arguments
        SpawnLog.record(Fixtures.netrunner, process.arguments ?? [])
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
            Issue.record("serve \(arguments) started instead of refusing")
        }
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: errors.fileHandleForReading.availableData, as: UTF8.self))
    }

    @Test("--api-key '' and a keys file with a line of spaces are refused at start")
    func emptyKeys() throws {
        let empty = try refusedStart(["--api-key", ""])
        #expect(empty.status == 64, "\(empty.stderr)")
        #expect(empty.stderr.contains("--api-key cannot be empty"), "\(empty.stderr)")
        let spaced = try refusedStart(["--api-key", " s3cret"])
        #expect(spaced.status == 64, "\(spaced.stderr)")
        let folder = try TemporaryFolder(prefix: "netrunner-keys")
        defer { folder.remove() }
        let file = folder.url.appendingPathComponent("keys").path
        try Data("good-key\n   \n".utf8).write(to: URL(fileURLWithPath: file))
        let blank = try refusedStart([
            "--models", Fixtures.path("Models/bundles"), "--no-import", "--api-keys-file", file,
        ])
        #expect(blank.status == 64, "\(blank.stderr)")
        #expect(blank.stderr.contains("line 2 is not a key"), "\(blank.stderr)")
    }

    @Test("Pages of other origins and other host names (DNS rebinding) are refused before any work")
    func crossSite() async throws {
        let folder = try TemporaryFolder(prefix: "netrunner-cross-site")
        defer { folder.remove() }
        try await LiveServer.serve(
            ["--threads", "1", "--allowed-host", "netrunner.example", "--cors-origin", "https://app.example"],
            models: folder.url.path
        ) { server in
            let port = server.port
            func post(_ path: String, headers: [String: String], body: String) async throws -> (
                status: Int?, text: String
            ) {
                var request =
                    "POST \(path) HTTP/1.1\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n"
                if headers["Host"] == nil { request += "Host: 127.0.0.1:\(port)\r\n" }
                for (name, value) in headers { request += "\(name): \(value)\r\n" }
                return try await RawHTTP.exchange(port: port, request + "Connection: close\r\n\r\n" + body)
            }
            let job = #"{"url": "http://127.0.0.1:9/model.tflite"}"#
            let evil = try await post("/v1/imports", headers: ["Origin": "https://evil.example"], body: job)
            #expect(evil.status == 403, "\(evil.text)")
            #expect(evil.text.contains("--cors-origin"), "\(evil.text)")
            let rebound = try await post(
                "/v1/imports", headers: ["Origin": "http://evil.example:\(port)", "Host": "evil.example:\(port)"],
                body: job
            )
            #expect(rebound.status == 421, "\(rebound.text)")
            let renamed = try await RawHTTP.get(port: port, "/v1/models", headers: ["Host": "evil.example"])
            #expect(renamed.status == 421, "\(renamed.text)")
            let jobs = try await server.request("/v1/imports").json["imports"] as? [Any]
            #expect(jobs?.isEmpty == true, "no job was started: \(String(describing: jobs))")
            // What still works: no Origin (curl, SDKs), the server's own page, an allowed origin, an
            // allowed host name.
            let photo = try Data(contentsOf: URL(fileURLWithPath: Self.photos + "/coffee.jpg"))
            let path = "/v1/models/\(Self.classifier)/classify"
            #expect(
                try await server.request(path, method: "POST", body: photo, contentType: "image/jpeg").status == 200)
            let own = try await server.request(
                path, method: "POST", body: photo, contentType: "image/jpeg",
                headers: ["Origin": "http://127.0.0.1:\(port)"])
            #expect(own.status == 200)
            let friend = try await server.request(
                path, method: "POST", body: photo, contentType: "image/jpeg", headers: ["Origin": "https://app.example"]
            )
            #expect(friend.status == 200 && friend.headers["access-control-allow-origin"] == "https://app.example")
            let named = try await RawHTTP.get(
                port: port, "/v1/models", headers: ["Host": "netrunner.example", "Origin": "http://netrunner.example"])
            #expect(named.status == 200, "\(named.text.prefix(300))")
            // The live socket: a foreign page is not upgraded (a refused upgrade is answered 400).
            let upgrade =
                "GET /v1/live?model=\(Self.classifier) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\n"
                + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            let foreignSocket = try RawConnection(port: port)
            await foreignSocket.send(upgrade + "Origin: https://evil.example\r\n\r\n")
            let refused = await foreignSocket.readUntilClosed(timeout: .seconds(10))
            #expect(RawConnection.status(refused.bytes) == 400, "\(String(decoding: refused.bytes, as: UTF8.self))")
            let ownSocket = try RawConnection(port: port)
            await ownSocket.send(upgrade + "Origin: http://127.0.0.1:\(port)\r\n\r\n")
            let accepted = await ownSocket.readUntilClosed(timeout: .seconds(2))
            #expect(RawConnection.status(accepted.bytes) == 101, "\(String(decoding: accepted.bytes, as: UTF8.self))")
            // Closed first: an open WebSocket would hold the stop's drain.
            shutdown(ownSocket.socket, Int32(SHUT_RDWR))
        }
    }
}
