import Foundation
import NetRunnerTestSupport
import Testing

/// Issue 43, finding 1: a 151 KB HEIC killed `serve` (SIGSEGV inside libheif, the server gone).
/// `serve` decodes HEIC and AVIF in child processes now: whatever a decoder does on a file, that
/// request gets an error and every other request, and the server, go on. The crash is injected
/// (the children read NETRUNNER_DECODER_FAULT), since the known crashing files are refused by
/// libheif 1.19's limits before they reach a decoder.
@Suite("serve: decoders in child processes", .serialized)
struct DecoderProcessServeTests {
    static let classify = "/v1/models/mobilenet-v2-1.0-224-uint8/classify"
    static let heic = Fixtures.path("Tests/Fixtures/Formats/heic_plain.heic")
    static let coffee = Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")

    static func top(_ reply: ServerProcess.Reply) -> String? {
        let results = reply.json["inference_results"] as? [String: Any]
        let classes = results?["classes"] as? [[String: Any]] ?? results?["categories"] as? [[String: Any]]
        return classes?.first?["label"] as? String ?? classes?.first?["category_name"] as? String
    }

    @Test("A decoder that crashes on every HEIC costs each one a 400, a rendering's too; JPEGs and the server go on")
    func crashingDecoder() async throws {
        let server = try await ServerProcess(environment: ["NETRUNNER_DECODER_FAULT": "crash"])
        let heic = try Data(contentsOf: URL(fileURLWithPath: Self.heic))
        let jpeg = try Data(contentsOf: URL(fileURLWithPath: Self.coffee))
        for round in 0..<3 {
            let failed = try await server.request(Self.classify, method: "POST", body: heic)
            let text = String(decoding: failed.body, as: UTF8.self)
            #expect(
                failed.status == 400 && text.contains("crashed") && text.contains("SIGSEGV"), "round \(round): \(text)")
            let answered = try await server.request(Self.classify, method: "POST", body: jpeg)
            #expect(answered.status == 200, "round \(round): \(String(decoding: answered.body, as: UTF8.self))")
            // The page's rendering of a photo the browser cannot draw decodes in the same children.
            let unrendered = try await server.request("/v1/render", method: "POST", body: heic)
            let why = String(decoding: unrendered.body, as: UTF8.self)
            #expect(unrendered.status == 400 && why.contains("crashed") && why.contains("SIGSEGV"), "\(why)")
            let rendered = try await server.request("/v1/render", method: "POST", body: jpeg)
            #expect(rendered.status == 200 && rendered.body.starts(with: [0xFF, 0xD8]), "round \(round)")
        }
        let ready = try await server.request("/v2/health/ready")
        #expect(ready.status == 200)
        server.expectCleanStop()
    }

    /// Not injected: a HEIC grid whose tiles decode smaller than they declare corrupts libheif
    /// 1.19's heap (found by the fuzz suite). serve answers 400 and goes on; the command line,
    /// which decodes HEIC in its own decoder processes too, says why and exits 1.
    @Test("A HEIC that corrupts libheif's heap costs its request a 400 and the command line one error")
    func realCrash() async throws {
        let taller = Fixtures.path("Tests/Fixtures/Hostile/heic_grid_tile_taller.heic")
        let server = try await ServerProcess()
        let failed = try await server.request(
            Self.classify, method: "POST", body: try Data(contentsOf: URL(fileURLWithPath: taller)))
        let text = String(decoding: failed.body, as: UTF8.self)
        #expect(failed.status == 400 && text.contains("crashed"), "\(text)")
        let jpeg = try Data(contentsOf: URL(fileURLWithPath: Self.coffee))
        #expect(try await server.request(Self.classify, method: "POST", body: jpeg).status == 200)
        server.expectCleanStop()
        let cli = try await OffPool.run {
            try ProcessResult.run(Fixtures.netrunner, ["classify", taller, Self.coffee])
        }
        #expect(
            cli.status == 1 && cli.stderr.contains("crashed in its decoder process"), "\(cli.status): \(cli.stderr)")
        #expect(cli.stdout.contains("espresso"), "the other photo is answered: \(cli.stdout)")
    }

    /// pillow-heif 1.8.1's `corrupted.heic` (`heic_bitstream_assert.heic`): libheif 1.19 aborts on
    /// an assertion (`bitstream.cc:169`) reading it from a file (`heif_context_read_from_file`).
    /// The shim reads from memory, where 1.19 refuses it ("Insufficient input data"), so it is a
    /// plain error on every path; should a libheif abort on it there, the decoder processes hold.
    @Test("A HEIC that makes libheif 1.19 assert costs its request a 4xx and the command line one error line")
    func assertingFile() async throws {
        let name = "Tests/Fixtures/Hostile/heic_bitstream_assert.heic"
        let path = Fixtures.path(name)
        let server = try await ServerProcess()
        let jpeg = try Data(contentsOf: URL(fileURLWithPath: Self.coffee))
        for round in 0..<2 {
            let failed = try await server.request(
                Self.classify, method: "POST", body: try Data(contentsOf: URL(fileURLWithPath: path)))
            let text = String(decoding: failed.body, as: UTF8.self)
            #expect((400..<500).contains(failed.status), "round \(round): \(failed.status) \(text)")
            let answered = try await server.request(Self.classify, method: "POST", body: jpeg)
            #expect(answered.status == 200, "round \(round): \(String(decoding: answered.body, as: UTF8.self))")
            #expect(String(decoding: answered.body, as: UTF8.self).contains("espresso"), "round \(round)")
        }
        #expect(try await server.request("/v2/health/ready").status == 200)
        server.expectCleanStop()
        // The command line (decoder processes by default), and in process: exit 1, not SIGABRT
        // (status 6), with one error line naming the file.
        for environment: [String: String?] in [
            ["NETRUNNER_DECODE_IN_PROCESS": nil], ["NETRUNNER_DECODE_IN_PROCESS": "1"],
        ] {
            let cli = try await OffPool.run {
                try ProcessResult.run(Fixtures.netrunner, ["classify", path], environment: environment)
            }
            let errors = cli.stderr.split(separator: "\n").filter { $0.contains("heic_bitstream_assert.heic") }
            #expect(cli.status == 1, "\(environment): \(cli.status): \(cli.stderr)")
            // Refused by libheif; in a decoder process, a libheif that aborted would be "crashed".
            let inProcess = environment.values.contains("1")
            #expect(
                errors.count == 1
                    && (errors[0].contains("not a valid HEIF image")
                        || (!inProcess && errors[0].contains("crashed in its decoder process"))),
                "\(environment): \(cli.stderr)")
            #expect(!cli.stderr.contains("Assertion"), "\(environment): \(cli.stderr)")
            #expect(cli.stdout.isEmpty, "\(environment): \(cli.stdout)")
        }
    }

    @Test("A HEIC decoded in serve's decoder process answers as the command line's")
    func sameAnswer() async throws {
        let cli = try await OffPool.run {
            try ProcessResult.run(
                Fixtures.netrunner,
                [
                    "bulk", "--exact-decoding", "--no-progress", "--model",
                    Fixtures.path("Models/bundles/mobilenet_v2_1.0_224_uint8.tiobundle"), Self.heic,
                ])
        }
        #expect(cli.status == 0, "\(cli.stderr)")
        let line = try #require(try JSONSerialization.jsonObject(with: Data(cli.stdout.utf8)) as? [String: Any])
        let server = try await ServerProcess()
        let reply = try await server.request(
            Self.classify, method: "POST", body: try Data(contentsOf: URL(fileURLWithPath: Self.heic)))
        #expect(reply.status == 200)
        let served = (reply.json["inference_results"] as? [String: Any] ?? [:]) as NSDictionary
        let expected = (line["inference_results"] as? [String: Any] ?? [:]) as NSDictionary
        #expect(served == expected, "served \(served), the command line \(expected)")
        server.expectCleanStop()
    }
}
