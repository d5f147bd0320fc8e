import Foundation
import NetRunnerSupport
import Testing

/// Issue 43, finding 9: a model answering NaN or infinity made Foundation's encoder refuse the
/// whole answer (the server answered 500, the command line printed the error). Such numbers
/// are written as `null` now, and everything else as before.
@Suite("JSON of the package's outputs")
struct JSONCodingTests {
    struct Keypoint: Encodable {
        var x: Float
        var y: Double
        var score: Float
        var label: String
    }

    @Test("NaN and infinities become null; finite numbers and strings stay")
    func nonFinite() throws {
        let values = [
            Keypoint(x: .nan, y: .infinity, score: -.infinity, label: "nose"),
            Keypoint(x: 0.5, y: -2, score: 1, label: "a \"quoted\" \u{1} label"),
        ]
        let text = String(decoding: try JSONCoding.encoder().encode(values), as: UTF8.self)
        #expect(
            text
                == #"[{"label":"nose","score":null,"x":null,"y":null},"#
                + #"{"label":"a \"quoted\" \u0001 label","score":1,"x":0.5,"y":-2}]"#)
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])
        #expect(parsed[0]["x"] is NSNull && parsed[0]["score"] is NSNull)
        struct Named: Encodable { var someValue = Double.nan }
        let pretty = String(
            decoding: try JSONCoding.encoder(pretty: true, snakeCaseKeys: true).encode(Named()), as: UTF8.self)
        #expect(pretty.contains(#""some_value" : null"#), "\(pretty)")
    }
}
