import Foundation
import NetRunnerTestSupport
import Testing

@testable import NetRunnerEngine
@testable import TensorFlowLite

/// KServe v2's datatypes for the element types of TensorFlow Lite tensors: one table of names
/// and sizes, and JSON data read into and written from each (issue 24: INT64, INT16, FP16
/// inputs were refused with a shape error, since the codec knew only 1- and 4-byte types).
@Suite("KServe datatypes")
struct KServeDataTypeTests {
    @Test(
        "Each LiteRT type KServe has a name for is named as Triton names it, with its element size",
        arguments: [
            (Tensor.DataType.bool, "BOOL"), (.uInt8, "UINT8"), (.uInt16, "UINT16"), (.uInt32, "UINT32"),
            (.uInt64, "UINT64"), (.int8, "INT8"), (.int16, "INT16"), (.int32, "INT32"), (.int64, "INT64"),
            (.float16, "FP16"), (.bFloat16, "BF16"), (.float32, "FP32"), (.float64, "FP64"), (.string, "BYTES"),
        ] as [(Tensor.DataType, String)])
    func names(type: Tensor.DataType, name: String) {
        #expect(KServeTensorCodec.name(type) == name)
        #expect(KServeTensorCodec.datatype(type)?.size == type.size)
        // A model configuration's name (model_config.proto): TYPE_ and the name, but BYTES is TYPE_STRING.
        #expect(KServeTensorCodec.configName(type) == (name == "BYTES" ? "TYPE_STRING" : "TYPE_" + name))
    }

    @Test("complex64 has no KServe datatype; every other type has one")
    func complete() {
        for type in Tensor.DataType.allCases {
            #expect((KServeTensorCodec.datatype(type) == nil) == (type == .complex64), "\(type)")
        }
        #expect(KServeTensorCodec.configName(.complex64) == "TYPE_INVALID")
    }

    /// Parses `json` as the data of a tensor of `type` and `shape`.
    static func decode(_ json: String, _ type: Tensor.DataType, _ shape: [Int], input: String = "x") throws -> Data {
        let bytes = Array(json.utf8)
        let count = shape.reduce(1, *)
        return try bytes.withUnsafeBytes { raw in
            try KServeTensorCodec.decode(json: raw, as: type, shape: shape, count: count, input: input)
        }
    }

    /// A tensor's JSON data as the codec writes it.
    static func encode(_ data: Data, _ type: Tensor.DataType) throws -> String {
        var text: [UInt8] = []
        try KServeTensorCodec.appendJSON(data, as: type, to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    static func little<T: FixedWidthInteger>(_ values: [T]) -> Data {
        Data(values.flatMap { value in withUnsafeBytes(of: value.littleEndian) { Array($0) } })
    }

    @Test("Every fixed-size type is read from JSON at its size and written back, the extremes of its range included")
    func roundTrips() throws {
        let cases: [(Tensor.DataType, String, Data)] = [
            (.bool, "[true,false,true]", Data([1, 0, 1])),
            (.uInt8, "[0,255,7]", Data([0, 255, 7])),
            (.int8, "[-128,127,0]", Self.little([Int8(-128), 127, 0])),
            (.uInt16, "[0,65535,1]", Self.little([UInt16(0), 65535, 1])),
            (.int16, "[-32768,32767,-1]", Self.little([Int16.min, Int16.max, -1])),
            (.uInt32, "[0,4294967295,1]", Self.little([UInt32(0), UInt32.max, 1])),
            (.int32, "[-2147483648,2147483647,5]", Self.little([Int32.min, Int32.max, 5])),
            (.uInt64, "[0,18446744073709551615,1]", Self.little([UInt64(0), UInt64.max, 1])),
            (
                .int64, "[-9223372036854775808,9223372036854775807,9007199254740993]",
                Self.little([Int64.min, Int64.max, 9_007_199_254_740_993])
            ),
            (
                .float32, "[1.5,-3.4028235e+38,0.1]",
                Self.little([Float(1.5).bitPattern, (-Float.greatestFiniteMagnitude).bitPattern, Float(0.1).bitPattern])
            ),
            (
                .float64, "[1.5,-1e+308,0.1]",
                Self.little([Double(1.5).bitPattern, Double(-1e308).bitPattern, Double(0.1).bitPattern])
            ),
            (.float16, "[1.5,-65504.0,0.099975586]", Self.little([UInt16(0x3E00), 0xFBFF, 0x2E66])),
            (.bFloat16, "[1.5,-2.0,0.100097656]", Self.little([UInt16(0x3FC0), 0xC000, 0x3DCD])),
        ]
        for (type, json, bytes) in cases {
            let decoded = try Self.decode(json, type, [3])
            #expect(decoded == bytes, "\(type): \(Array(decoded)) != \(Array(bytes))")
            #expect(try Self.encode(decoded, type) == json, "\(type)")
        }
        // Written other ways, the same values: exponents, fractions of zero, nesting as the shape.
        #expect(try Self.decode("[1e2, 2.0E0, -0, 3]", .int64, [2, 2]) == Self.little([Int64(100), 2, 0, 3]))
        #expect(try Self.decode("[[1, 2], [3, 4]]", .int16, [2, 2]) == Self.little([Int16(1), 2, 3, 4]))
        #expect(try Self.decode("[[[1], [2]]]", .uInt8, [1, 2, 1]) == Data([1, 2]))
        #expect(try Self.decode("[0, 1]", .bool, [2]) == Data([0, 1]))
        #expect(try Self.decode(" 7 ", .int32, []) == Self.little([Int32(7)]))
        #expect(try Self.decode("1e-400", .float32, [1]) == Self.little([UInt32(0)]))
    }

    @Test(
        "Values outside the type's range, or not whole for an integer type, are refused naming the input and the value")
    func outOfRange() {
        let cases: [(String, Tensor.DataType, String)] = [
            ("[1e39]", .float32, #"Input "pixels": 1e39 at index 0 is outside FP32's range"#),
            ("[0, -1e308]", .float32, #"Input "pixels": -1e308 at index 1 is outside FP32's range"#),
            ("[1e309]", .float64, "outside FP64's range"),
            ("[65520]", .float16, #""x": 65520 at index 0 is outside FP16's range"#),
            ("[256]", .uInt8, "outside UINT8's range, 0 to 255"),
            ("[-1]", .uInt8, "-1 at index 0 is outside UINT8's range"),
            ("[128]", .int8, "outside INT8's range, -128 to 127"),
            ("[2147483648]", .int32, "outside INT32's range"),
            ("[9223372036854775808]", .int64, "outside INT64's range"),
            ("[-1]", .uInt64, "outside UINT64's range"),
            ("[1.5]", .int32, "1.5 at index 0 is not a whole number, as INT32 needs"),
            ("[1e30]", .int64, "outside INT64's range"),
            ("[2]", .bool, "is not true, false, 0 or 1"),
        ]
        for (json, type, message) in cases {
            #expect(throws: KServeTensorCodec.Refusal.self, "\(json) as \(type)") {
                _ = try Self.decode(json, type, [1], input: type == .float32 ? "pixels" : "x")
            }
            do {
                _ = try Self.decode(
                    json, type, json.contains(",") ? [2] : [1], input: type == .float32 ? "pixels" : "x")
            } catch {
                #expect("\(error)".contains(message), "\(json) as \(type): \(error)")
            }
        }
    }

    @Test("Data that is not numbers in arrays shaped as the tensor is refused: strings, booleans, NaN, nesting, ragged")
    func malformed() {
        let cases: [(String, [Int], Tensor.DataType, String)] = [
            (#"["1", 2]"#, [2], .float32, #"Input "x": "1" at index 0 is not a number"#),
            ("[true, false]", [2], .float32, "true at index 0 is not a number, as FP32 needs"),
            ("[NaN, 1]", [2], .float32, "NaN at index 0 is not a number"),
            ("[1, Infinity]", [2], .float32, "Infinity at index 1 is not a number"),
            ("[null, 1]", [2], .uInt8, "null at index 0 is not a number"),
            ("[{}, 1]", [2], .uInt8, "is not a number"),
            ("[01, 1]", [2], .uInt8, "01 at index 0 is not a number"),
            ("[1., 1]", [2], .float32, "1. at index 0 is not a number"),
            ("[[1, 2], [3]]", [2, 2], .uInt8, "an array of 1 where its shape [2, 2] needs 2"),
            ("[[1, 2, 3], [4]]", [2, 2], .uInt8, "an array of 3 where its shape [2, 2] needs 2"),
            ("[[1, 2], 3, 4]", [2, 2], .uInt8, "nested unlike its shape"),
            ("[1, [2], 3, 4]", [2, 2], .uInt8, "nested deeper than its shape"),
            ("[[[1]]]", [1, 1], .uInt8, "nested deeper than its shape"),
            (String(repeating: "[", count: 100_000), [2], .uInt8, "nested deeper than its shape [2]"),
            ("[1, 2", [2], .uInt8, "the end of the data where ',' or ']' belongs"),
            ("[1 2]", [2], .uInt8, "where ',' or ']' belongs"),
            ("[1, 2] 3", [2], .uInt8, "after its last value"),
            ("[1, 2, 3]", [2], .uInt8, #"Input "x" has more values than its shape [2] holds (2)."#),
            ("[1]", [2], .uInt8, #"Input "x" has 1 values; its shape [2] needs 2."#),
            ("5", [2], .uInt8, "nested unlike its shape"),
            ("[" + String(repeating: "1", count: 500) + "]", [1], .float32, "a value over 400 characters"),
        ]
        for (json, shape, type, message) in cases {
            do {
                _ = try Self.decode(json, type, shape)
                Issue.record("\(json.prefix(40)) as \(type) \(shape) was taken")
            } catch {
                #expect("\(error)".contains(message), "\(json.prefix(40)) as \(type) \(shape): \(error)")
            }
        }
    }

    @Test("Far more values than the tensor holds: refused at the first one too many, whatever follows")
    func farTooMany() {
        // 4 million values for a tensor of 8, then garbage the scanner never reaches.
        let json = "[" + String(repeating: "1,", count: 4_000_000) + "1, \"never read\"]"
        do {
            _ = try Self.decode(json, .uInt8, [2, 4])
            Issue.record("taken")
        } catch {
            #expect("\(error)" == #"Input "x" has more values than its shape [2, 4] holds (8)."#)
        }
    }

    @Test("NaN and infinities in float outputs are written as Triton writes them: NaN, Infinity, -Infinity")
    func nonFiniteOutputs() throws {
        let floats = Self.little([Float.nan.bitPattern, Float.infinity.bitPattern, (-Float.infinity).bitPattern, 0])
        #expect(try Self.encode(floats, .float32) == "[NaN,Infinity,-Infinity,0.0]")
        let doubles = Self.little([Double.nan.bitPattern, (-Double.infinity).bitPattern])
        #expect(try Self.encode(doubles, .float64) == "[NaN,-Infinity]")
        #expect(try Self.encode(Self.little([UInt16(0x7E00), 0x7C00]), .float16) == "[NaN,Infinity]")
    }

    @Test("String outputs are written as BYTES strings, escaped; a malformed string buffer is refused")
    func strings() throws {
        // count 2, offsets 16, 19, 21, then "a\"b" "\n\u{1}".
        var buffer = Self.little([Int32(2), 16, 19, 21])
        buffer.append(contentsOf: Array("a\"b".utf8) + [0x0A, 0x01])
        #expect(try Self.encode(buffer, .string) == #"["a\"b","\u000a\u0001"]"#)
        #expect(
            KServeTensorCodec.binary([[0x41], []]) == Self.little([UInt32(1)]) + Data([0x41]) + Self.little([UInt32(0)])
        )
        #expect(throws: KServeTensorCodec.Refusal.self) {
            try Self.encode(Self.little([Int32(2), 16, 99, 100]), .string)
        }
        #expect(throws: KServeTensorCodec.Refusal.self) { try Self.encode(Self.little([Int32.max]), .string) }
        #expect(throws: KServeTensorCodec.Refusal.self) { try Self.encode(Data(count: 8), .complex64) }
    }

    @Test("The request's inputs' data is found, blanked for the decoder, however the rest is written")
    func inferBody() throws {
        let json = #"""
            {"id": "a[{\"", "inputs": [{"name": "x", "data": [[1, 2], [3, 4]], "shape": [2, 2]},
             {"d\u0061ta": [5], "name": "y"}, 7, {"name": "z"}], "outputs": [{"data": [9]}]}
            """#
        let bytes = Array(json.utf8)
        let body = try bytes.withUnsafeBytes { try KServeInferBody(json: $0) }
        let text = { (range: Range<Int>?) in range.map { String(decoding: bytes[$0], as: UTF8.self) } }
        #expect(text(body.data[0]) == "[[1, 2], [3, 4]]")
        #expect(text(body.data[1]) == "[5]")
        #expect(body.data[2] == nil && body.data[3] == nil && body.data.count == 2)
        let skeleton = try #require(try JSONSerialization.jsonObject(with: body.skeleton) as? [String: Any])
        let inputs = try #require(skeleton["inputs"] as? [Any])
        #expect((inputs[0] as? [String: Any])?["data"] is NSNull)
        #expect(((skeleton["outputs"] as? [[String: Any]])?.first?["data"] as? [Int]) == [9])
        #expect(skeleton["id"] as? String == "a[{\"")
        #expect(throws: KServeTensorCodec.Refusal.self) {
            try Array(#"{"inputs": [], "inputs": []}"#.utf8).withUnsafeBytes { try KServeInferBody(json: $0) }
        }
    }

    /// The refusal a body gets from ``KServeInferBody``, or `nil` when it is read.
    static func refusal(_ json: [UInt8]) -> String? {
        do {
            _ = try json.withUnsafeBytes { try KServeInferBody(json: $0) }
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test("A body cut short is refused with where, never handed whole to the decoder")
    func cutShort() throws {
        // 32 MiB of numbers in a data array that is never closed: before the fix the whole body
        // became the decoder's skeleton (+815 MB per request).
        var json = Array(#"{"inputs": [{"name": "x", "shape": [1], "datatype": "FP32", "data": ["#.utf8)
        let number = Array("0.5,".utf8)
        while json.count < 32 << 20 { json += number }
        let refusal = try #require(Self.refusal(json))
        #expect(
            refusal
                == "The inference request is not valid JSON for KServe v2: it ends at byte \(json.count) before its value is closed (a body cut short?)"
        )
        #expect(Self.refusal(Array(#"{"inputs": []} x"#.utf8))?.contains("line 1, column 16") == true)
        #expect(Self.refusal(Array(#"{"inputs": [],}"#.utf8))?.contains("not valid JSON") == true)
        #expect(Self.refusal(Array(#"{"inputs": []}"#.utf8)) == nil)
    }

    @Test("JSON outside the inputs' data is bounded; the data itself is not")
    func boundedSkeleton() throws {
        let big = String(repeating: "1,", count: KServeInferBody.maximumSkeletonBytes / 2) + "1"
        let outside = Array(#"{"inputs": [], "parameters": {"x": [\#(big)]}}"#.utf8)
        #expect(Self.refusal(outside)?.contains("bytes of JSON outside its inputs' \"data\"") == true)
        let inside = Array(#"{"inputs": [{"name": "x", "data": [\#(big)]}]}"#.utf8)
        #expect(Self.refusal(inside) == nil)
    }
}
