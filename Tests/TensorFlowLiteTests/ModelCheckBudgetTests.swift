import Foundation
import NetRunnerFlatBuffers
import NetRunnerTestSupport
import Testing

@testable import TensorFlowLite

/// Issue 54, finding 5: the check measured a model's memory by allocating it, so a 460-byte
/// model declaring a 1.4 GB tensor cost the process tree 2.7 GB before it was refused. The
/// parent now sums the tensors the file declares before any child starts, and the child runs
/// with its address space limited to the budget plus the runtime's own needs.
@Suite("The model check's memory budget")
struct ModelCheckBudgetTests {
    static let checker = Fixtures.netrunner

    /// A TFLite model of one subgraph with one float32 tensor (input and output) of `shape`,
    /// written with the project's own FlatBuffers builder: a few hundred bytes.
    static func crafted(shape: [Int32]) -> [UInt8] {
        var builder = FlatBufferBuilder()
        let name = builder.string("x")
        let dimensions = builder.vector(shape)
        builder.startTable()  // Tensor: shape 0, type 1 (float32 = 0), buffer 2, name 3
        builder.add(offset: dimensions, field: 0)
        builder.add(UInt8(0), field: 1)
        builder.add(UInt32(0), field: 2)
        builder.add(offset: name, field: 3)
        let tensor = builder.endTable()
        let tensors = builder.vector(offsets: [tensor])
        let inputs = builder.vector([Int32(0)])
        let outputs = builder.vector([Int32(0)])
        builder.startTable()  // SubGraph: tensors 0, inputs 1, outputs 2
        builder.add(offset: tensors, field: 0)
        builder.add(offset: inputs, field: 1)
        builder.add(offset: outputs, field: 2)
        let subgraph = builder.endTable()
        let subgraphs = builder.vector(offsets: [subgraph])
        builder.startTable()  // Buffer 0: the empty sentinel
        let buffer = builder.endTable()
        let buffers = builder.vector(offsets: [buffer])
        builder.startTable()  // Model: version 0, subgraphs 2, buffers 4
        builder.add(UInt32(3), field: 0)
        builder.add(offset: subgraphs, field: 2)
        builder.add(offset: buffers, field: 4)
        let model = builder.endTable()
        return builder.finished(root: model, identifier: "TFL3")
    }

    static func sum(_ bytes: [UInt8]) -> DeclaredTensors.Sum {
        bytes.withUnsafeBytes { DeclaredTensors.sum($0) }
    }

    @Test("The sum is every non-constant tensor's shape times its element size, overflow and all")
    func declaredSums() throws {
        #expect(Self.sum(Self.crafted(shape: [1, 224, 224, 3])) == .bytes(224 * 224 * 3 * 4))
        #expect(Self.sum(Self.crafted(shape: [1, 4096, 4096, 21])) == .bytes(4096 * 4096 * 21 * 4))
        #expect(Self.sum(Self.crafted(shape: [Int32.max, Int32.max, Int32.max, Int32.max, 2])) == .overflow)
        #expect(Self.sum(Self.crafted(shape: [0, Int32.max])) == .bytes(0))
        #expect(Self.sum([UInt8](repeating: 0xFF, count: 64)) == .unreadable)
        // The committed fixture of the issue: 460 bytes, a [1,4096,4096,21] float32 output.
        let fixture = try ModelCheck.declaredTensorBytes(
            modelPath: Fixtures.path("Tests/Fixtures/Hostile/tile_1400mb.tflite"))
        #expect((fixture ?? 0) >= 4096 * 4096 * 21 * 4 && (fixture ?? 0) < 1_500_000_000, "\(fixture ?? -1)")
        // MobileNetV2's activations, not its weights (constant buffers): a few MB.
        let mobileNet = try ModelCheck.declaredTensorBytes(modelPath: Fixtures.path(Fixtures.MobileNet.uint8))
        #expect((1 << 20..<(64 << 20)).contains(mobileNet ?? 0), "\(mobileNet ?? -1)")
    }

    @Test("A tiny model declaring a huge tensor is refused before any child starts, naming both sizes")
    func refusedBeforeAllocation() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let bytes = Self.crafted(shape: [1, 65536, 65536, 4])
        #expect(bytes.count < 1024)
        let path = try folder.write(Data(bytes), named: "huge.tflite")
        let started = Date()
        let report = try ModelCheck.report(modelPath: path, checkerPath: Self.checker, memoryBudget: 512 << 20)
        #expect(report.verdict == .rejected("\(path) declares 64.0 GiB of tensors; the check allows 512 MiB"))
        #expect(report.isOverBudget && report.memoryBudget == 512 << 20)
        #expect(Date().timeIntervalSince(started) < 2, "no child process, nothing allocated")
        // Without a budget, the machine's memory is the budget (this one has less than 64 GiB).
        let unbudgeted = try ModelCheck.report(modelPath: path, checkerPath: Self.checker)
        if ModelCheck.defaultMemoryBudget < 64 << 30 {
            #expect(unbudgeted.isOverBudget)
            guard case .rejected(let reason) = unbudgeted.verdict else {
                Issue.record("expected a rejection, got \(unbudgeted.verdict)")
                return
            }
            #expect(reason.hasSuffix("(the machine's memory)"), "\(reason)")
        }
        let overflowing = try folder.write(
            Data(Self.crafted(shape: [Int32.max, Int32.max, Int32.max, Int32.max, 2])), named: "overflow.tflite")
        let counted = try ModelCheck.report(modelPath: overflowing, checkerPath: Self.checker, memoryBudget: 512 << 20)
        #expect(
            counted.verdict
                == .rejected(
                    "\(overflowing) declares more bytes of tensors than can be counted; the check allows 512 MiB"))
    }

    @Test("An allocation past the child's address space is a refusal, not a crash of the parent")
    func allocationPastTheLimit() throws {
        // 85 MiB declared, within a budget of 100 MiB; loaded and run it takes about 177 MiB,
        // which the child's address space (what it maps, 100 MiB, and the runtime's allowance)
        // does not hold.
        let path = Fixtures.path("Tests/Fixtures/Hostile/tile_88mb.tflite")
        let report = try ModelCheck.report(modelPath: path, checkerPath: Self.checker, memoryBudget: 100 << 20)
        #expect(!report.verdict.isAccepted, "\(report)")
        if case .rejected(let reason) = report.verdict {
            #expect(report.isOverBudget)
            #expect(reason.contains("within the check's budget of 100 MiB"), "\(reason)")
        }
        // With room, the same model is accepted and measured.
        let roomy = try ModelCheck.report(modelPath: path, checkerPath: Self.checker, memoryBudget: 1 << 30)
        #expect(roomy.verdict == .accepted && (roomy.memoryBytes ?? 0) > 85 << 20, "\(roomy)")
    }

    /// The committed models of `Models/`.
    static let committedModels = [
        "deeplabv3_mnv2_dm05_pascal_quant.tflite", "deeplabv3_mnv2_pascal_quant.tflite",
        "face_detection_short_range.tflite", "face_detection_short_range_ssd.tflite",
        "mobilenet_v1_1.0_224_quant_embedding_extractor.tflite", "mobilenet_v2_1.0_224_float32.tflite",
        "mobilenet_v2_1.0_224_int8.tflite", "mobilenet_v2_1.0_224_uint8.tflite",
        "mobilenet_v2_1.0_224_uint8_metadata.tflite", "movenet_single_pose_lightning_ptq.tflite",
    ].map { "Models/" + $0 }

    @Test("Every committed model passes the check under serve's default budget (512 MiB)", arguments: committedModels)
    func committedModelsPass(model: String) throws {
        let report = try ModelCheck.report(
            modelPath: Fixtures.path(model), checkerPath: Self.checker, memoryBudget: 512 << 20)
        #expect(report.verdict == .accepted && !report.isOverBudget, "\(report)")
        #expect((report.memoryBytes ?? 0) < 512 << 20)
        let declared = try ModelCheck.declaredTensorBytes(modelPath: Fixtures.path(model)) ?? -1
        #expect((0..<(512 << 20)).contains(declared), "\(declared)")
    }

    @Test("Every committed model passes with eight threads under a budget of 64 MiB", arguments: committedModels)
    func committedModelsPassTightly(model: String) throws {
        var options = Interpreter.Options()
        options.threadCount = 8
        let report = try ModelCheck.report(
            modelPath: Fixtures.path(model), options: options, checkerPath: Self.checker, memoryBudget: 64 << 20)
        #expect(report.verdict == .accepted, "\(report)")
    }
}
