import Foundation
import NetRunnerTestSupport
import Testing

@testable import NetRunnerServer

/// Issue 22: numbers a client sends to `serve` (KServe v2 bodies, /v1 queries and bodies) never
/// end the process: each is answered 4xx with a JSON message naming it, or 200 where valid. The
/// composed server runs in process (issue 34): a trap would end the test process itself.
@Suite("netrunner serve: hostile numbers", .serialized)
struct KServeHostileTests {
    static let uint8 = "mobilenet-v2-1.0-224-uint8"
    static let float32 = "mobilenet-v2-1.0-224-float32"
    static let pixels = 224 * 224 * 3

    /// A model's first input and output names, from its KServe metadata.
    static func names(_ server: ServerSession, _ model: String) async throws -> (input: String, output: String) {
        let metadata = try await server.request("/v2/models/\(model)").json
        let input = try #require((metadata["inputs"] as? [[String: Any]])?.first?["name"] as? String)
        let output = try #require((metadata["outputs"] as? [[String: Any]])?.first?["name"] as? String)
        return (input, output)
    }

    /// POSTs a KServe infer body: `json`, then `binary` with the header's length declared when there is any.
    static func infer(
        _ server: ServerSession, _ model: String, _ json: String, binary: Data? = nil, headerLength: String? = nil
    ) async throws -> ServerSession.Reply {
        var body = Data(json.utf8)
        var headers: [String: String] = [:]
        if let binary {
            headers["Inference-Header-Content-Length"] = headerLength ?? String(body.count)
            body.append(binary)
        }
        return try await server.request(
            "/v2/models/\(model)/infer", method: "POST", body: body, contentType: "text/plain", headers: headers)
    }

    /// The KServe error message of a reply, or its body as text.
    static func message(_ reply: ServerSession.Reply) -> String {
        reply.json["error"] as? String ?? String(decoding: reply.body.prefix(2000), as: UTF8.self)
    }

    @Test("Shapes, binary_data_size and classification counts that trapped are 400s naming them; the server lives")
    func processKillers() async throws {
        try await ServerSession.with { server in
            let (input, output) = try await Self.names(server, Self.uint8)
            let grey = Data(repeating: 128, count: Self.pixels)
            func binaryInput(size: String) -> String {
                #"{"name":"\#(input)","shape":[1,224,224,3],"datatype":"UINT8","parameters":{"binary_data_size":\#(size)}}"#
            }
            func classifying(_ count: String) -> String {
                #"{"inputs":[\#(binaryInput(size: String(Self.pixels)))],"#
                    + #""outputs":[{"name":"\#(output)","parameters":{"classification":\#(count)}}]}"#
            }
            let cases: [(String, String, Data?, Int, String)] = [
                (
                    "item 1: a shape whose product overflows",
                    #"{"inputs":[{"name":"\#(input)","shape":[4611686018427387904,4],"datatype":"UINT8","data":[1]}]}"#,
                    nil, 400, "shape"
                ),
                (
                    "item 2: binary_data_size 1e30", #"{"inputs":[\#(binaryInput(size: "1e30"))]}"#, grey, 400,
                    "binary_data_size"
                ),
                ("binary_data_size -1", #"{"inputs":[\#(binaryInput(size: "-1"))]}"#, grey, 400, "binary_data_size"),
                ("item 3: classification 1e30", classifying("1e30"), grey, 400, "classification"),
                ("classification 0", classifying("0"), grey, 400, "classification"),
                ("classification 2.5", classifying("2.5"), grey, 400, "classification"),
                (
                    "an output asked for twice (a body of copies would ask for gigabytes)",
                    #"{"inputs":[\#(binaryInput(size: String(Self.pixels)))],"#
                        + #""outputs":[{"name":"\#(output)"},{"name":"\#(output)"}]}"#, grey, 400, "asked for twice"
                ),
            ]
            for (name, json, binary, status, expected) in cases {
                let reply = try await Self.infer(server, Self.uint8, json, binary: binary)
                #expect(reply.status == status, "\(name): \(Self.message(reply))")
                #expect(Self.message(reply).contains(expected), "\(name): \(Self.message(reply))")
                #expect(try await server.request("/v2/health/live").status == 200, "\(name): the server died")
            }
            // Item 4: a count past the labels is clamped to them: every class, best first.
            let all = try await Self.infer(server, Self.uint8, classifying("1e13"), binary: grey)
            #expect(all.status == 200, "\(Self.message(all))")
            let strings = ((all.json["outputs"] as? [[String: Any]])?.first?["data"] as? [String]) ?? []
            #expect(strings.count == 1001 || strings.count == 1000, "\(strings.count)")
            #expect(try await server.request("/v2/health/ready").status == 200)
        }
    }

    @Test(
        "Values outside an input's datatype are 400s naming the input; NaN and infinite outputs are written as Triton writes them"
    )
    func valuesOutOfRange() async throws {
        try await ServerSession.with { server in
            let (float, _) = try await Self.names(server, Self.float32)
            let (bytes, _) = try await Self.names(server, Self.uint8)
            func tensor(_ name: String, _ type: String, first: String) -> String {
                #"{"inputs":[{"name":"\#(name)","shape":[1,224,224,3],"datatype":"\#(type)","data":[\#(first)"#
                    + String(repeating: ",0", count: Self.pixels - 1) + "]}]}"
            }
            let cases: [(String, String, String, String)] = [
                (Self.float32, tensor(float, "FP32", first: "1e39"), "1e39", "FP32"),
                (Self.float32, tensor(float, "FP32", first: "-1e308"), "-1e308", "FP32"),
                (Self.uint8, tensor(bytes, "UINT8", first: "256"), "256", "UINT8"),
                (Self.uint8, tensor(bytes, "UINT8", first: "-1"), "-1", "UINT8"),
                (Self.uint8, tensor(bytes, "UINT8", first: "1.5"), "1.5", "UINT8"),
            ]
            for (model, json, value, type) in cases {
                let reply = try await Self.infer(server, model, json)
                let text = Self.message(reply)
                #expect(reply.status == 400, "\(value): \(text)")
                #expect(text.contains("\"\(model == Self.uint8 ? bytes : float)\""), "\(value): \(text)")
                #expect(text.contains(value) && text.contains(type), "\(value): \(text)")
            }
            // A float model fed NaN answers NaN: written as Triton writes it (a bare NaN, as
            // Python's json reads it), not a 500.
            let nan = withUnsafeBytes(of: Float.nan.bitPattern.littleEndian) { Data($0) }
            let input = Data((0..<Self.pixels).flatMap { _ in nan })
            let reply = try await Self.infer(
                server, Self.float32,
                #"{"inputs":[{"name":"\#(float)","shape":[1,224,224,3],"datatype":"FP32","#
                    + #""parameters":{"binary_data_size":\#(input.count)}}]}"#,
                binary: input)
            #expect(reply.status == 200, "\(Self.message(reply))")
            let text = String(decoding: reply.body, as: UTF8.self)
            #expect(text.contains("\"data\":[NaN,NaN"), "\(text.prefix(300))")
        }
    }

    @Test("JSON data with far more values than the tensor holds is refused at the first value too many")
    func tooManyValues() async throws {
        try await ServerSession.with { server in
            let (input, _) = try await Self.names(server, Self.uint8)
            // 8 MB of values, 27 times what the tensor holds.
            let json =
                #"{"inputs":[{"name":"\#(input)","shape":[1,224,224,3],"datatype":"UINT8","data":["#
                + String(repeating: "1,", count: 4_000_000) + "1]}]}"
            let reply = try await Self.infer(server, Self.uint8, json)
            #expect(reply.status == 400)
            #expect(
                Self.message(reply)
                    == "Input \"\(input)\" has more values than its shape [1, 224, 224, 3] holds (150528).",
                "\(Self.message(reply))")
        }
    }

    // MARK: Fuzz

    /// Numbers (and things in their place) every numeric position is given.
    static let extremes = [
        "9223372036854775807", "-9223372036854775808", "-1", "0", "1", "1e30", "-1e308", "1e39", "NaN", "Infinity",
        "-Infinity", "4611686018427387904", "18446744073709551616", "1.5", "-0", "1e-400", "2147483648", "true",
        "\"7\"", "null", "[]", "{}", "1" + String(repeating: "0", count: 400),
    ]

    @Test("Fuzz: extreme numbers in every numeric position of KServe bodies and /v1 requests are 4xx or 200, never 5xx")
    func fuzz() async throws {
        let folder = try TemporaryFolder(prefix: "netrunner-number-fuzz")
        defer { folder.remove() }
        let models = folder.path("Models")
        try FileManager.default.createDirectory(atPath: models, withIntermediateDirectories: true)
        for bundle in ["mobilenet_v2_1.0_224_uint8.tiobundle", "mobilenet_v2_1.0_224_float32.tiobundle"] {
            try FileManager.default.copyItem(
                atPath: Fixtures.path("Models/bundles/\(bundle)"), toPath: models + "/" + bundle)
        }
        try await ServerSession.with(
            threads: 2, models: models,
            configuration: .init(albums: [Fixtures.path("Tests/Fixtures/Photos/test")])
        ) { server in
            var random = SeededGenerator(seed: 0x6E75_6D62_6572_7332)
            var sent = 0

            func check(_ reply: ServerSession.Reply, _ what: @autoclosure () -> String) {
                sent += 1
                #expect(reply.status < 500, "\(what()): \(reply.status) \(Self.message(reply))")
                if reply.status >= 400 {
                    #expect(reply.json["error"] != nil, "\(what()): not a JSON error: \(Self.message(reply))")
                }
            }

            // KServe: a valid binary request, each numeric position (and the names) replaced by each extreme.
            for (model, type, size) in [(Self.uint8, "UINT8", Self.pixels), (Self.float32, "FP32", Self.pixels * 4)] {
                let (input, output) = try await Self.names(server, model)
                let binary = Data(repeating: 0, count: size)
                let positions = [
                    "D0", "D1", "D2", "D3", "SIZE", "COUNT", "BINARY", "OUTPUTBINARY", "ID", "INPUT", "OUTPUT", "TYPE",
                ]
                // Each position a placeholder `@NAME@`, replaced by its value.
                let template =
                    #"{"id":@ID@,"inputs":[{"name":@INPUT@,"shape":[@D0@,@D1@,@D2@,@D3@],"datatype":@TYPE@,"#
                    + #""parameters":{"binary_data_size":@SIZE@}}],"outputs":[{"name":@OUTPUT@,"#
                    + #""parameters":{"classification":@COUNT@,"binary_data":@BINARY@}}],"#
                    + #""parameters":{"binary_data_output":@OUTPUTBINARY@}}"#
                let valid: [String: String] = [
                    "D0": "1", "D1": "224", "D2": "224", "D3": "3", "SIZE": String(size), "COUNT": "3",
                    "BINARY": "false", "OUTPUTBINARY": "false", "ID": "\"f\"", "INPUT": "\"\(input)\"",
                    "OUTPUT": "\"\(output)\"", "TYPE": "\"\(type)\"",
                ]
                func body(_ values: [String: String]) -> String {
                    var text = template
                    for position in positions {
                        text = text.replacingOccurrences(of: "@\(position)@", with: values[position]!)
                    }
                    return text
                }
                let base = try await Self.infer(server, model, body(valid), binary: binary)
                #expect(base.status == 200, "\(model): \(Self.message(base))")
                for position in positions {
                    for extreme in Self.extremes {
                        var values = valid
                        values[position] = extreme
                        let json = body(values)
                        check(
                            try await Self.infer(server, model, json, binary: binary), "\(model) \(position)=\(extreme)"
                        )
                    }
                }
                // Several positions at once, seeded.
                for _ in 0..<40 {
                    var values = valid
                    for _ in 0..<3 {
                        values[positions.randomElement(using: &random)!] = Self.extremes.randomElement(using: &random)!
                    }
                    let json = body(values)
                    check(try await Self.infer(server, model, json, binary: binary), "\(model) \(values)")
                }
                // The header's length.
                for extreme in Self.extremes + ["", " 1", "0x10", "1" + String(repeating: "0", count: 30)] {
                    check(
                        try await Self.infer(server, model, body(valid), binary: binary, headerLength: extreme),
                        "\(model) Inference-Header-Content-Length: \(extreme)")
                }
                // JSON data: an extreme first, last, or every value; ragged, deep and huge arrays.
                let count = Self.pixels
                let zeros = String(repeating: "0,", count: count - 1)
                var datas: [(String, String)] = []
                for (number, extreme) in Self.extremes.enumerated() {
                    // First or last (alternately: each costs a whole tensor of text), alone, bare.
                    if number % 2 == 0 {
                        datas.append(("first \(extreme)", "[\(extreme)," + zeros.dropLast() + "]"))
                    } else {
                        datas.append(("last \(extreme)", "[" + zeros + "\(extreme)]"))
                    }
                    datas.append(("only \(extreme)", "[\(extreme)]"))
                    datas.append(("bare \(extreme)", extreme))
                }
                datas.append(("nested", "[[" + zeros + "0]]"))
                datas.append(("ragged", "[[[" + String(repeating: "0,", count: 200) + "0]," + "[0]]]"))
                datas.append(("deep", String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)))
                datas.append(("deep open", String(repeating: "[", count: 200_000)))
                datas.append(("huge", "[" + String(repeating: "1e39,", count: 600_000) + "0]"))
                datas.append(("huge objects", "[" + String(repeating: "{},", count: 500_000) + "0]"))
                datas.append(("strings", "[" + String(repeating: "\"0\",", count: count - 1) + "\"0\"]"))
                for (name, data) in datas {
                    let json =
                        #"{"inputs":[{"name":"\#(input)","shape":[1,224,224,3],"datatype":"\#(type)","data":\#(data)}]}"#
                    check(try await Self.infer(server, model, json), "\(model) data \(name)")
                }
                // Huge shapes.
                for shape in [
                    "[" + String(repeating: "1,", count: 200_000) + "1]",
                    "[" + String(repeating: "65536,", count: 64) + "1]",
                    String(repeating: "[", count: 50_000),
                ] {
                    let json = #"{"inputs":[{"name":"\#(input)","shape":\#(shape),"datatype":"\#(type)","data":[0]}]}"#
                    check(try await Self.infer(server, model, json), "\(model) shape \(shape.prefix(20))")
                }
            }

            // /v1: every number of a query, and the import body's fields.
            let photo = try Data(
                contentsOf: URL(fileURLWithPath: Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")))
            let encoded = { (text: String) in text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "" }
            for extreme in Self.extremes + ["", "1e3", "0x10", " 3"] {
                let value = encoded(extreme)
                for query in ["maxResults", "scoreThreshold"] {
                    let reply = try await server.request(
                        "/v1/models/\(Self.uint8)/classify?\(query)=\(value)", method: "POST", body: photo,
                        contentType: "image/jpeg")
                    check(reply, "classify \(query)=\(extreme)")
                }
                if !value.isEmpty {
                    check(try await server.request("/v1/albums/test/images/\(value)"), "album image \(extreme)")
                }
                check(try await server.request("/v1/runs/none?offset=\(value)&limit=\(value)"), "runs \(extreme)")
                check(
                    try await server.request(
                        "/v1/albums/test/runs?model=\(Self.uint8)&maxResults=\(value)", method: "POST"),
                    "album run maxResults=\(extreme)")
                for body in [#"{"url":\#(extreme)}"#, #"{"url":"http://127.0.0.1:1/x.zip","sha256":\#(extreme)}"#]
                where extreme != "null" && !extreme.hasPrefix("\"") && !extreme.isEmpty {
                    check(
                        try await server.request(
                            "/v1/imports", method: "POST", body: Data(body.utf8), contentType: "text/plain"),
                        "import \(body)")
                }
            }
            #expect(sent > 500)
            // The process lives (a trap would have ended this one) and still answers.
            #expect(try await server.request("/v2/health/ready").status == 200)
        }
    }
}
