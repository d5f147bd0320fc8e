import Foundation
import NetRunnerTestSupport
import TensorFlowLite
import Testing

/// Every kind of bad model file gives `InterpreterError.failedToLoadModel(reason:)`, and the
/// reason names the file and says what is wrong with it.
@Suite("Loading bad models throws failedToLoadModel with a reason")
struct ModelLoadingTests {
    /// How one bad model must be refused: these texts must all be in the reason.
    struct BadModel: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: @Sendable () throws -> Data
        var because: [String]
        var testDescription: String { name }
    }

    static let mobileNetFile = Fixtures.MobileNet.uint8

    static let badModels: [BadModel] = [
        BadModel(name: "empty.tflite", bytes: { Data() }, because: ["the file is empty"]),
        BadModel(
            name: "five.tflite", bytes: { Data([0x1C, 0, 0, 0, 0x54]) },
            because: ["5 bytes is too small to be a TensorFlow Lite model"]),
        BadModel(
            name: "seven.tflite", bytes: { Data([0x1C, 0, 0, 0, 0x54, 0x46, 0x4C]) },
            because: ["7 bytes is too small"]),
        BadModel(
            name: "photo.png", bytes: { try Fixtures.data("Tests/Fixtures/Photos/test/chelsea.png") },
            because: [
                "not a TensorFlow Lite model (it looks like a PNG image; a .tflite file has \"TFL3\" at bytes 4-7)"
            ]),
        BadModel(
            name: "photo.heic", bytes: { try Fixtures.data("Tests/Fixtures/Formats/heic_plain.heic") },
            because: ["not a TensorFlow Lite model (it looks like a HEIC image;"]),
        BadModel(
            name: "photo.webp", bytes: { try Fixtures.data("Tests/Fixtures/Formats/webp_lossy.webp") },
            because: ["not a TensorFlow Lite model (it looks like a WebP image;"]),
        BadModel(
            name: "text.tflite", bytes: { Data("This is not a model at all.".utf8) },
            because: ["not a TensorFlow Lite model (it looks like text; a .tflite file has \"TFL3\" at bytes 4-7)"]),
        BadModel(
            name: "random-with-identifier.tflite", bytes: { randomBytesWithIdentifier(count: 4096) },
            because: ["not a valid TensorFlow Lite"]),
        BadModel(
            name: "identifier-only.tflite", bytes: { Data([8, 0, 0, 0]) + Data("TFL3".utf8) },
            because: ["not a valid TensorFlow Lite"]),
        BadModel(
            name: "truncated-10.tflite", bytes: { try Fixtures.data(mobileNetFile).prefix(10) },
            because: ["not a valid TensorFlow Lite flatbuffer", "truncated or corrupt"]),
        BadModel(
            name: "truncated-1000.tflite", bytes: { try Fixtures.data(mobileNetFile).prefix(1000) },
            because: ["not a valid TensorFlow Lite flatbuffer", "truncated or corrupt"]),
        BadModel(
            name: "truncated-half.tflite",
            bytes: {
                let data = try Fixtures.data(mobileNetFile)
                return data.prefix(data.count / 2)
            },
            because: ["not a valid TensorFlow Lite flatbuffer", "truncated or corrupt"]),
        BadModel(
            name: "truncated-last-byte.tflite",
            bytes: { try Fixtures.data(mobileNetFile).dropLast() },
            because: ["not a valid TensorFlow Lite flatbuffer", "truncated or corrupt"]),
        BadModel(
            name: "bit-flipped.tflite",
            bytes: {
                // The top bit of the root table's offset: the root now lies 2 GiB away.
                var data = try Fixtures.data(mobileNetFile)
                data[3] ^= 0x80
                return data
            },
            because: ["not a valid TensorFlow Lite flatbuffer"]),
        BadModel(
            name: "signature-output-moved.tflite",
            bytes: {
                // dynamic_batch's subgraph output list, pointed at the input tensor: the
                // signature's output is then no output of the subgraph (LiteRT aborted on this).
                var data = try Fixtures.data(Fixtures.Synthetic.dynamicBatch)
                guard let outputs = subgraphOutputListOffset(data) else { throw FixtureError.layout }
                data.replaceSubrange(outputs..<(outputs + 4), with: Data(count: 4))
                return data
            },
            because: ["not a valid TensorFlow Lite model", "signature 0 output 0 is not an output of its subgraph"]),
        BadModel(
            name: "negative-per-channel-scale.tflite",
            bytes: {
                // per_channel_input's scales [0.5, 0.25, 0.125], the second made negative.
                try replacing([0.5, 0.25, 0.125], with: [0.5, -0.25, 0.125], in: Fixtures.Synthetic.perChannelInput)
            },
            because: ["not a valid TensorFlow Lite model", "tensor 0 has the quantization scale -0.25"]),
        BadModel(
            name: "per-channel-axis-past-rank.tflite",
            bytes: {
                // per_channel_input's shape vectors [1, 2, 2, 3] emptied: the input is then a
                // scalar quantized along axis 3 (LiteRT read past its shape and crashed).
                var data = try Fixtures.data(Fixtures.Synthetic.perChannelInput)
                let shape = TensorBytes.data([Int32](arrayLiteral: 4, 1, 2, 2, 3))
                let emptied = TensorBytes.data([Int32](arrayLiteral: 0, 1, 2, 2, 3))
                guard data.firstRange(of: shape) != nil else { throw FixtureError.layout }
                while let range = data.firstRange(of: shape) { data.replaceSubrange(range, with: emptied) }
                return data
            },
            because: ["not a valid TensorFlow Lite model", "tensor 0 is quantized along axis 3 but has rank 0"]),
        BadModel(
            name: "zero-points-without-scales.tflite",
            bytes: {
                // MobileNet int8's input scale vector [1/255] given length 0, one byte changed:
                // one zero point and no scale (LiteRT aborted on this).
                var data = try Fixtures.data(Fixtures.MobileNet.int8)
                let vector = TensorBytes.data([UInt32(1), (Float(1) / 255).bitPattern])
                guard let range = data.firstRange(of: vector) else { throw FixtureError.layout }
                data[range.lowerBound] = 0
                return data
            },
            because: ["not a valid TensorFlow Lite model", "tensor 0 has 0 quantization scales and 1 zero points"]),
        BadModel(
            name: "infinite-input-scale.tflite",
            bytes: {
                // MobileNet int8's input scale 1/255 made infinite (LiteRT aborted on this).
                try replacing([Float(1) / 255], with: [.infinity], in: Fixtures.MobileNet.int8)
            },
            because: ["not a valid TensorFlow Lite model", "tensor 0 has the quantization scale inf"]),
    ]

    enum FixtureError: Error {
        case layout
    }

    /// The committed model `file` with the one run of float32 `values` replaced by `replacement`.
    static func replacing(_ values: [Float], with replacement: [Float], in file: String) throws -> Data {
        var data = try Fixtures.data(file)
        let pattern = TensorBytes.data(values)
        guard let range = data.firstRange(of: pattern), data[range.upperBound...].firstRange(of: pattern) == nil
        else { throw FixtureError.layout }
        data.replaceSubrange(range, with: TensorBytes.data(replacement))
        return data
    }

    /// `count` seeded random bytes with a valid root offset and the `TFL3` identifier.
    static func randomBytesWithIdentifier(count: Int) -> Data {
        var random = SeededGenerator(seed: 7)
        var data = Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &random) })
        data.replaceSubrange(0..<8, with: [16, 0, 0, 0] + Array("TFL3".utf8))
        return data
    }

    /// The position of the first element of subgraph 0's `outputs` vector in a TFLite file,
    /// read with a minimal FlatBuffers walk (root → subgraphs[0] → outputs[0]).
    static func subgraphOutputListOffset(_ data: Data) -> Int? {
        let bytes = [UInt8](data)
        func u32(_ at: Int) -> Int? {
            guard at >= 0, at + 4 <= bytes.count else { return nil }
            return Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
        }
        func field(_ table: Int, _ index: Int) -> Int? {
            guard let relative = u32(table) else { return nil }
            let vtable = table - Int(Int32(truncatingIfNeeded: relative))
            let entry = vtable + 4 + 2 * index
            guard entry >= 0, entry + 2 <= bytes.count else { return nil }
            let offset = Int(bytes[entry]) | Int(bytes[entry + 1]) << 8
            return offset == 0 ? nil : table + offset
        }
        func target(_ table: Int, _ index: Int) -> Int? {
            guard let position = field(table, index), let offset = u32(position) else { return nil }
            return position + offset
        }
        guard let root = u32(0), let subgraphs = target(root, 2), let first = u32(subgraphs + 4),
            let outputs = target(subgraphs + 4 + first, 2), u32(outputs) == 1
        else { return nil }
        return outputs + 4
    }

    /// Expects `body` to throw `failedToLoadModel` whose reason holds every text given.
    static func expectLoadFailure(
        _ texts: [String], sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
    ) {
        do {
            try body()
            Issue.record("the model loaded", sourceLocation: sourceLocation)
        } catch {
            guard case .failedToLoadModel(let reason) = error as? InterpreterError else {
                Issue.record("expected failedToLoadModel, got \(error)", sourceLocation: sourceLocation)
                return
            }
            for text in texts {
                #expect(reason.contains(text), "\"\(reason)\" should say \"\(text)\"", sourceLocation: sourceLocation)
            }
        }
    }

    @Test("A bad file is refused, naming the file and the problem", arguments: badModels)
    func badFile(model: BadModel) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = try folder.write(try model.bytes(), named: model.name)
        Self.expectLoadFailure([path] + model.because) {
            _ = try Interpreter(modelPath: path)
        }
    }

    @Test("Bad bytes given as Data are refused the same way, as \"model data\"", arguments: badModels)
    func badData(model: BadModel) throws {
        let data = try model.bytes()
        Self.expectLoadFailure(["model data"] + model.because) {
            _ = try Interpreter(modelData: data)
        }
    }

    @Test("A missing file is refused as missing")
    func missingFile() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("absent.tflite")
        Self.expectLoadFailure([path, "no such file or directory"]) {
            _ = try Interpreter(modelPath: path)
        }
    }

    @Test("A directory is refused as not a regular file")
    func directory() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("model.tflite")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        Self.expectLoadFailure([path, "not a regular file"]) {
            _ = try Interpreter(modelPath: path)
        }
    }

    @Test("An unreadable file is refused with the system's reason", .enabled(if: geteuid() != 0, "root reads any file"))
    func unreadableFile() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = try folder.write(try Fixtures.data(Fixtures.Synthetic.dynamicBatch), named: "locked.tflite")
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: path)
        Self.expectLoadFailure([path, "permission denied"]) {
            _ = try Interpreter(modelPath: path)
        }
    }

    @Test("The error's description puts TensorFlowLiteSwift's text before the reason")
    func descriptionOfLoadFailure() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = try folder.write(Data(), named: "empty.tflite")
        do {
            _ = try Interpreter(modelPath: path)
            Issue.record("an empty file loaded")
        } catch let error as InterpreterError {
            #expect(error == .failedToLoadModel(reason: "\(path): the file is empty."))
            #expect(error.description == "Failed to load the given model: \(path): the file is empty.")
        }
    }

    @Test("A good model copied into the temporary folder still loads (the checks are not too strict)")
    func goodCopyLoads() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        for file in CorruptModels.smallModels + CorruptModels.mobileNets {
            let path = try folder.write(try Fixtures.data(file), named: (file as NSString).lastPathComponent)
            let interpreter = try Interpreter(modelPath: path)
            #expect(interpreter.inputTensorCount > 0, "\(file)")
        }
    }
}
