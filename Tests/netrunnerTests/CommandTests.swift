import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

/// The `netrunner` executable, run as a user runs it: arguments in, stdout, stderr and the
/// exit status out.
@Suite("netrunner command line")
struct CommandTests {
    /// A decoder for the tool's JSON, whose keys are snake_case.
    static var snakeCase: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }

    struct InspectReport: Decodable {
        struct TensorReport: Decodable {
            var index: Int
            var name: String
            var nameInSignature: String?
            var dtype: String
            var shape: [Int]
            var shapeSignature: [Int]
            var quantization: Quantization?
        }
        struct Quantization: Decodable {
            var scale: [Float]
            var zeroPoint: [Int]
            var quantizedDimension: Int?
        }
        struct Signature: Decodable {
            var key: String
            var inputs: [TensorReport]
            var outputs: [TensorReport]
        }
        var model: String
        var bytes: Int
        var inputs: [TensorReport]
        var outputs: [TensorReport]
        var signatures: [Signature]
    }

    static let reference: Reference? = try? Fixtures.reference()
    static var models: [Reference.Model] { reference?.models ?? [] }

    func netrunner(_ arguments: String..., environment: [String: String?] = [:]) throws -> ProcessResult {
        try ProcessResult.run(Fixtures.netrunner, arguments, environment: environment)
    }

    @Test("inspect --json reports what Python's get_input_details / get_output_details report", arguments: models)
    func inspectJSONMatchesReference(model: Reference.Model) throws {
        let result = try netrunner("inspect", "--json", Fixtures.path(model.file))
        if model.inputs.contains(where: { $0.dtype == "string" }) {
            #expect(result.status == 1)
            #expect(result.stderr.contains("unsupported"))
            return
        }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "the runtime's log lines must not reach stderr: \(result.stderr)")
        let report = try Self.snakeCase.decode(InspectReport.self, from: Data(result.stdout.utf8))
        #expect(report.bytes == model.bytes)
        #expect(report.inputs.map(\.name) == model.inputs.map(\.name))
        #expect(report.inputs.map(\.dtype) == model.inputs.map(\.dtype))
        #expect(report.inputs.map(\.shape) == model.inputs.map(\.shape))
        #expect(report.inputs.map(\.shapeSignature) == model.inputs.map(\.shapeSignature))
        #expect(report.outputs.map(\.name) == model.outputs.map(\.name))
        #expect(report.outputs.map(\.dtype) == model.outputs.map(\.dtype))
        #expect(report.signatures.map(\.key) == model.signatures.map(\.key))
        for (reported, expected) in zip(report.inputs, model.inputs) {
            if let quantization = expected.quantization {
                #expect(reported.quantization?.scale == [Float(quantization.scale)])
                #expect(reported.quantization?.zeroPoint == [quantization.zeroPoint])
            } else if let perChannel = expected.perChannel {
                #expect(reported.quantization?.scale == perChannel.scales.map { Float($0) })
                #expect(reported.quantization?.quantizedDimension == perChannel.quantizedDimension)
            } else {
                #expect(reported.quantization == nil)
            }
        }
        for (reported, expected) in zip(report.signatures, model.signatures) {
            #expect(reported.inputs.compactMap(\.nameInSignature) == expected.inputs)
            #expect(reported.outputs.compactMap(\.nameInSignature) == expected.outputs)
        }
    }

    @Test("inspect prints names, types, shapes and quantization as text")
    func inspectText() throws {
        let result = try netrunner("inspect", Fixtures.path(Fixtures.MobileNet.uint8))
        #expect(result.status == 0)
        #expect(result.stdout.contains("\"serving_default_image:0\" (as \"image\") uint8 [1, 224, 224, 3]"))
        #expect(result.stdout.contains("quantized scale 0.003921569 zero point 0"))
        #expect(result.stdout.contains("Signatures: 1"))
        let dynamic = try netrunner("inspect", Fixtures.path(Fixtures.Synthetic.dynamicBatch))
        #expect(dynamic.stdout.contains("float32 [1, 4] signature [-1, 4]"))
    }

    @Test("A missing or corrupt model is one line on stderr naming the file, exit status 1")
    func inspectBadModel() throws {
        let missing = try netrunner("inspect", "/nonexistent/model.tflite")
        #expect(missing.status == 1)
        #expect(missing.stdout.isEmpty)
        #expect(missing.stderr.contains("/nonexistent/model.tflite: no such file or directory"))
        #expect(missing.stderr.split(separator: "\n").count == 1)

        let photo = Fixtures.path("Tests/Fixtures/Photos/test/chelsea.png")
        let notAModel = try netrunner("inspect", photo)
        #expect(notAModel.status == 1)
        #expect(notAModel.stderr.contains("not a TensorFlow Lite model"))
    }

    @Test("bench --json reports benchmark_model's figures")
    func benchJSON() throws {
        let result = try netrunner(
            "bench", "--json", "--runs", "5", "--warmup", "2", "--threads", "2", Fixtures.path(Fixtures.MobileNet.int8))
        #expect(result.status == 0, "\(result.stderr)")
        struct Report: Decodable {
            struct Stats: Decodable {
                var count: Int
                var min: Double
                var max: Double
                var mean: Double
                var median: Double
                var std: Double
            }
            var modelBytes: Int
            var threads: Int
            var initMilliseconds: Double
            var firstInferenceMicroseconds: Double
            var warmupMeanMicroseconds: Double?
            var inferenceMicroseconds: Stats
            var peakResidentBytes: Int?
        }
        let report = try Self.snakeCase.decode(Report.self, from: Data(result.stdout.utf8))
        let stats = report.inferenceMicroseconds
        #expect(report.modelBytes == (try Fixtures.data(Fixtures.MobileNet.int8)).count)
        #expect(report.threads == 2)
        #expect(stats.count == 5)
        #expect(stats.min > 0 && stats.min <= stats.median && stats.median <= stats.max)
        #expect(stats.min <= stats.mean && stats.mean <= stats.max)
        #expect(report.initMilliseconds > 0)
        #expect(report.firstInferenceMicroseconds > 0)
        #expect(report.warmupMeanMicroseconds != nil)
        // The 4 MB model and the runtime are resident: the peak is well above that.
        #expect((report.peakResidentBytes ?? 0) > 8_000_000)
    }

    @Test("bench text output has benchmark_model's lines")
    func benchText() throws {
        let result = try netrunner("bench", "--runs", "3", Fixtures.path(Fixtures.Synthetic.multiIO))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("The input model file size (MB):"))
        #expect(result.stdout.contains("Initialized session in"))
        #expect(result.stdout.contains("Inference timings in us: Init:"))
        #expect(result.stdout.contains("count=3 "))
        #expect(result.stdout.contains("Peak resident memory"))
    }

    @Test("Invalid flags are usage errors (exit status 64)")
    func usageErrors() throws {
        let model = Fixtures.path(Fixtures.MobileNet.int8)
        #expect(try netrunner("bench", "--runs", "0", model).status == 64)
        #expect(try netrunner("bench", "--threads", "0", model).status == 64)
        #expect(try netrunner("check", "--timeout", "0", model).status == 64)
        #expect(try netrunner("inspect").status == 64)
        #expect(try netrunner("frobnicate").status == 64)
    }

    @Test("check accepts real models and refuses corrupt ones, in a child process")
    func check() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("netrunner-check-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let truncated = folder.appendingPathComponent("truncated.tflite")
        try (try Fixtures.data(Fixtures.MobileNet.int8)).prefix(100_000).write(to: truncated)

        let good = try netrunner(
            "check", Fixtures.path(Fixtures.MobileNet.int8), Fixtures.path(Fixtures.Synthetic.multiIO))
        #expect(good.status == 0, "\(good.stdout)")
        #expect(good.stdout.split(separator: "\n").allSatisfy { $0.hasPrefix("accepted") })

        let bad = try netrunner("check", Fixtures.path(Fixtures.MobileNet.int8), truncated.path)
        #expect(bad.status == 1)
        #expect(bad.stdout.contains("accepted  \(Fixtures.path(Fixtures.MobileNet.int8))"))
        #expect(bad.stdout.contains("rejected  \(truncated.path): Failed to load the given model:"))
    }

    @Test("Every subcommand has help", arguments: ["classify", "detect", "run", "inspect", "bench", "check"])
    func help(subcommand: String) throws {
        let result = try netrunner(subcommand, "--help")
        #expect(result.status == 0)
        #expect(result.stdout.contains("USAGE: netrunner \(subcommand)"))
        #expect(!result.stdout.contains("in-process"), "the child's flag stays hidden")
        #expect(!result.stdout.contains("model-check-child"), "the checker protocol is not a command")
    }

    @Test("check's old child flag is gone: the child's side is ModelCheck's own protocol")
    func checkHasNoChildFlag() throws {
        let result = try netrunner("check", "--in-process", Fixtures.path(Fixtures.MobileNet.int8))
        #expect(result.status == 64)
        #expect(result.stdout.isEmpty)
    }

    @Test(
        "Without the runtime, every command says so in one line and names the install command",
        arguments: ["classify", "detect", "inspect", "bench", "check"])
    func missingRuntime(subcommand: String) throws {
        let result = try netrunner(
            subcommand, Fixtures.path(Fixtures.MobileNet.int8),
            environment: ["NETRUNNER_LITERT_LIBRARY": "/nonexistent/libLiteRt.so"])
        #expect(result.status == 1)
        let lines = (result.stderr + result.stdout).split(separator: "\n")
        #expect(lines.count == 1, "\(lines)")
        #expect(lines.first?.contains("scripts/install-runtime.sh") == true)
        #expect(lines.first?.contains("/nonexistent/libLiteRt.so") == true)
    }
}
