import Foundation
import NetRunnerTestSupport
import Testing

@testable import TensorFlowLite

/// Whether this machine has a Vulkan device LiteRT's GPU accelerator can use, found by trying
/// (once per test process), with the reason when it has none.
enum GPUProbe {
    static let verdict: (usable: Bool, reason: String) = {
        var options = Interpreter.Options()
        options.accelerator = .gpu
        do {
            let interpreter = try Interpreter(modelPath: Fixtures.path(Fixtures.MobileNet.float32), options: options)
            return (interpreter.accelerator == .gpu, "")
        } catch {
            return (false, "\(error)")
        }
    }()

    /// Whether the GPU tests must run: `make test` sets NETRUNNER_TEST_REQUIRE_GPU=1 after
    /// installing lavapipe, so that a GPU that stopped working fails instead of skipping.
    static var required: Bool { ProcessInfo.processInfo.environment["NETRUNNER_TEST_REQUIRE_GPU"] == "1" }

    /// Whether to run the GPU tests (a required GPU that is missing runs them, so they fail),
    /// unless ``GPUTestSwitch`` turns them off.
    static var shouldRun: Bool { !GPUTestSwitch.isOff && (verdict.usable || required) }

    static var skipReason: Comment {
        if GPUTestSwitch.isOff { return GPUTestSwitch.offReason }
        return
            "no Vulkan device LiteRT's GPU accelerator can use here (\(verdict.reason)); scripts/install-gpu-packages.sh installs lavapipe"
    }
}

/// LiteRT's GPU accelerator (WebGPU over Vulkan; lavapipe in CI), against the CPU's outputs on
/// the Python reference's own inputs.
@Suite("The GPU accelerator", .serialized, .enabled(if: GPUProbe.shouldRun, GPUProbe.skipReason))
struct GPUTests {
    static let photos = ["chelsea", "coffee", "eagle", "grace_hopper"]

    static func run(
        _ accelerator: Accelerator, photo: String, precision: GPUPrecision = .fp32
    ) throws -> (Interpreter, [Float]) {
        var options = Interpreter.Options()
        options.accelerator = accelerator
        options.gpuPrecision = precision
        let interpreter = try Interpreter(modelPath: Fixtures.path(Fixtures.MobileNet.float32), options: options)
        try interpreter.allocateTensors()
        return (interpreter, try scores(of: interpreter, photo: photo))
    }

    /// The float MobileNet's scores for the Python reference's input of `photo`.
    static func scores(of interpreter: Interpreter, photo: String) throws -> [Float] {
        let input = try Fixtures.data("Tests/Fixtures/Reference/mobilenet_v2_1.0_224_float32__\(photo)__in0.bin")
        try interpreter.copy(input, toInputAt: 0)
        try interpreter.invoke()
        return Numerics.floats(try interpreter.output(at: 0).data)
    }

    @Test("The probe found a usable GPU")
    func probe() {
        #expect(GPUProbe.verdict.usable, "\(GPUProbe.verdict.reason)")
    }

    /// One interpreter per precision runs the four photos: making a GPU interpreter compiles its
    /// shaders, seconds of processor time on lavapipe (one per photo took 71 s of make test's).
    @Test(
        "Float MobileNetV2 runs fully on the GPU, top-1 as on the CPU, scores within 0.0001 (fp32) and 0.02 (fp16)",
        arguments: GPUPrecision.allCases)
    func matchesCPU(precision: GPUPrecision) throws {
        let (gpu, _) = try Self.run(.gpu, photo: Self.photos[0], precision: precision)
        #expect(gpu.accelerator == .gpu)
        #expect(gpu.isFullyAccelerated)
        #expect(gpu.acceleratorFallbackReason == nil)
        for photo in Self.photos {
            let gpuScores = try Self.scores(of: gpu, photo: photo)
            let reference = Numerics.floats(
                try Fixtures.referenceOutput("mobilenet_v2_1.0_224_float32__\(photo)__t1__out0.bin"))
            #expect(gpuScores.count == reference.count, "\(photo)")
            #expect(Numerics.topK(gpuScores, 1) == Numerics.topK(reference, 1), "\(photo)")
            let difference = Numerics.maxAbsoluteDifference(gpuScores, reference)
            #expect(difference <= (precision == .fp32 ? 0.0001 : 0.02), "\(photo): max |GPU - CPU| = \(difference)")
            #expect(
                gpuScores != reference,
                "\(photo): the GPU computes in reduced precision: identical outputs mean it did not run")
        }
    }

    @Test("auto picks the GPU when it is usable")
    func autoPicksGPU() throws {
        let (interpreter, _) = try Self.run(.auto, photo: "coffee")
        #expect(interpreter.accelerator == .gpu)
        #expect(interpreter.acceleratorFallbackReason == nil)
    }

    @Test("auto keeps a quantized model on the CPU, bit-exact, and says why; gpu runs it on the GPU")
    func autoKeepsQuantizedOnCPU() throws {
        var options = Interpreter.Options()
        options.accelerator = .auto
        let auto = try Interpreter(modelPath: Fixtures.path(Fixtures.MobileNet.uint8), options: options)
        #expect(auto.accelerator == .cpu)
        #expect(auto.acceleratorFallbackReason?.contains("quantized") == true)
        try auto.allocateTensors()
        try auto.copy(
            try Fixtures.data("Tests/Fixtures/Reference/mobilenet_v2_1.0_224_uint8__chelsea__in0.bin"), toInputAt: 0)
        try auto.invoke()
        let expected = try Fixtures.referenceOutput("mobilenet_v2_1.0_224_uint8__chelsea__t1__out0.bin")
        #expect(try auto.output(at: 0).data == expected)
        options.accelerator = .gpu
        let gpu = try Interpreter(modelPath: Fixtures.path(Fixtures.MobileNet.uint8), options: options)
        #expect(gpu.accelerator == .gpu)
        #expect(gpu.acceleratorFallbackReason == nil)
    }

    @Test("The CPU stays bit-exact beside a GPU interpreter")
    func cpuUnchanged() throws {
        let (cpu, scores) = try Self.run(.cpu, photo: "eagle")
        #expect(cpu.accelerator == .cpu)
        #expect(cpu.isFullyAccelerated)
        let reference = try Fixtures.referenceOutput("mobilenet_v2_1.0_224_float32__eagle__t1__out0.bin")
        #expect(scores == Numerics.floats(reference))
    }
}

@Suite("Accelerator choice")
struct AcceleratorTests {
    @Test("Options default to the CPU and compare by the accelerator")
    func optionsDefault() {
        var options = Interpreter.Options()
        #expect(options.accelerator == .cpu)
        let cpu = options
        options.accelerator = .gpu
        #expect(options != cpu)
        #expect(Accelerator(rawValue: "auto") == .auto)
        #expect(Accelerator.allCases.map(\.description) == ["cpu", "gpu", "auto"])
    }

    @Test("The log of a GPU that cannot start is told apart from a model's failure")
    func diagnosis() throws {
        let noDriver =
            "Warning: vkCreateInstance: Found no drivers!\nERROR: [delegate_webgpu.cc:359] Failed to initialize WebGPU environment: INTERNAL: No adapters found"
        let reason = try #require(GPUDiagnosis.unavailable(fromLog: noDriver))
        #expect(reason.description.contains("Vulkan"))
        #expect(reason.description.contains("docs/gpu.md"))
        let oldLavapipe = "Vulkan shaderUniformBufferArrayDynamicIndexing required\nNo adapters found"
        #expect(GPUDiagnosis.unavailable(fromLog: oldLavapipe)?.description.contains("no Vulkan device") == true)
        #expect(GPUDiagnosis.unavailable(fromLog: "ERROR: Didn't find op for builtin opcode 'CUSTOM'") == nil)
    }
}
