import Foundation
import NetRunner
import NetRunnerSupport
import NetRunnerTestSupport
import TensorFlowLite
import Testing

@Suite("The model gate: one child-process check per model, remembered by SHA-256")
struct ModelGateTests {
    /// A model no other test uses: a synthetic model with unique bytes appended (the flatbuffer
    /// ignores them), so its digest is new to the cache.
    static func uniqueModel(in folder: TemporaryFolder, named name: String) throws -> (path: String, digest: String) {
        var data = try Fixtures.data(Fixtures.Synthetic.multiIO)
        data.append(contentsOf: Array(UUID().uuidString.utf8))
        return (try folder.write(data, named: name), SHA256.hexDigest(of: data))
    }

    @Test("SHA-256 matches the standard's test vectors")
    func digests() {
        #expect(SHA256.hexDigest(of: Data()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            SHA256.hexDigest(of: Data("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        )
        #expect(
            SHA256.hexDigest(of: Data(repeating: UInt8(ascii: "a"), count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test(
        "A model that crashes the runtime is refused in a child process; this process survives and remembers",
        arguments: [[209_284: 0xFF, 209_285: 0xFF, 209_286: 0xFF, 209_287: 0xFF], [216_544: 0, 216_546: 1]])
    func crashingModel(bytes: [Int: UInt8]) throws {
        // BlazeFace with these bytes changed passes LiteRT's verifier and segfaults it (Python's
        // ai_edge_litert too); loaded in process, it would take the test run down.
        var data = try Fixtures.data("Models/face_detection_short_range.tflite")
        for (offset, value) in bytes { data[offset] = value }
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = try folder.write(data, named: "crashes.tflite")
        for _ in 0..<2 {  // the second time from the remembered verdict
            #expect {
                try ObjectDetector(modelPath: path)
            } throws: { error in
                guard case InterpreterError.failedToLoadModel(let reason) = error else { return false }
                return reason.contains("crashes.tflite") && reason.contains("crashed on this model in a check process")
            }
        }
        let digest = SHA256.hexDigest(of: data)
        let verdict = try String(contentsOfFile: ModelGate.cacheFolder + "/" + digest, encoding: .utf8)
        #expect(verdict.hasPrefix("netrunner model check\nsha256 \(digest)\nruntime LiteRT \(Runtime.version)\n"))
        #expect(verdict.contains("\nrefused the runtime crashed"))
    }

    /// BlazeFace with four bytes changed: it passes LiteRT's verifier and segfaults it; with
    /// unique bytes appended (the flatbuffer ignores them), so its digest is new to the cache.
    static func uniqueCrashingModel(in folder: TemporaryFolder, named name: String) throws -> (
        path: String, digest: String
    ) {
        var data = try Fixtures.data("Models/face_detection_short_range.tflite")
        for offset in 209_284...209_287 { data[offset] = 0xFF }
        data.append(contentsOf: Array(UUID().uuidString.utf8))
        return (try folder.write(data, named: name), SHA256.hexDigest(of: data))
    }

    /// The ways a verdict can be planted for a model: each must be ignored.
    enum Plant: String, CaseIterable, CustomTestStringConvertible {
        case writableByOthers, anotherRuntime, oldFormat, link, anotherUser
        var testDescription: String { rawValue }

        /// Writes `verdict` ("accepted" or "refused ...") for `digest` into the cache this way;
        /// `false` when this way cannot be tried here (another user's file needs root).
        func plant(_ verdict: String, digest: String, scratch: TemporaryFolder) throws -> Bool {
            let file = ModelGate.cacheFolder + "/" + digest
            try FileManager.default.createDirectory(atPath: ModelGate.cacheFolder, withIntermediateDirectories: true)
            let good = "netrunner model check\nsha256 \(digest)\nruntime LiteRT \(Runtime.version)\n\(verdict)\n"
            switch self {
            case .writableByOthers:
                try Data(good.utf8).write(to: URL(fileURLWithPath: file))
                chmod(file, 0o666)
            case .anotherRuntime:
                try Data(good.replacingOccurrences(of: Runtime.version, with: "0.0.1").utf8)
                    .write(to: URL(fileURLWithPath: file))
            case .oldFormat:
                try Data("\(verdict)\n".utf8).write(to: URL(fileURLWithPath: file))
            case .link:
                let target = try scratch.write(Data(good.utf8), named: "planted-\(digest.prefix(8))")
                try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: target)
            case .anotherUser:
                guard geteuid() == 0 else { return false }
                try Data(good.utf8).write(to: URL(fileURLWithPath: file))
                chmod(file, 0o644)
                guard chown(file, 65_534, 65_534) == 0 else { return false }
            }
            return true
        }
    }

    @Test("A planted 'accepted' never lets a crashing model into the process", arguments: Plant.allCases)
    func plantedAccepted(plant: Plant) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (path, digest) = try Self.uniqueCrashingModel(in: folder, named: "crashes.tflite")
        guard try plant.plant("accepted", digest: digest, scratch: folder) else { return }
        // Before the fix any file holding "accepted" let the model in: this process died here.
        #expect {
            try ObjectDetector(modelPath: path)
        } throws: { error in
            guard case InterpreterError.failedToLoadModel(let reason) = error else { return false }
            return reason.contains("crashed on this model in a check process")
        }
        // The planted file is replaced by the user's own verdict.
        let verdict = try String(contentsOfFile: ModelGate.cacheFolder + "/" + digest, encoding: .utf8)
        #expect(verdict.hasPrefix("netrunner model check\nsha256 \(digest)\n"))
        #expect(verdict.contains("\nrefused the runtime crashed"))
    }

    @Test("A planted 'refused' never keeps a good model out", arguments: Plant.allCases)
    func plantedRefused(plant: Plant) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (path, digest) = try Self.uniqueModel(in: folder, named: "good.tflite")
        guard try plant.plant("refused the runtime crashed on this model", digest: digest, scratch: folder) else {
            return
        }
        _ = try LoadedModel(.path(path)).makeInterpreter()
        let verdict = try String(contentsOfFile: ModelGate.cacheFolder + "/" + digest, encoding: .utf8)
        #expect(verdict.contains("\naccepted memory "), "\(verdict)")
    }

    @Test("Verdicts are kept only in a folder no other user can write")
    func sharedCacheFolder() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (path, digest) = try Self.uniqueCrashingModel(in: folder, named: "crashes.tflite")
        // A shared cache: the base folder writable by everyone (as /tmp/.cache made by another
        // user), holding a planted verdict in the user's own format and file.
        let shared = folder.path("shared")
        try FileManager.default.createDirectory(atPath: shared + "/model-checks", withIntermediateDirectories: true)
        chmod(shared, 0o777)
        let planted = "netrunner model check\nsha256 \(digest)\nruntime LiteRT \(Runtime.version)\naccepted\n"
        try Data(planted.utf8).write(to: URL(fileURLWithPath: shared + "/model-checks/" + digest))
        let photo = Fixtures.path("Tests/Fixtures/Photos/test/grace_hopper.jpg")
        let result = try ProcessResult.run(
            Fixtures.netrunner, ["detect", "--model", path, photo],
            environment: ["NETRUNNER_CACHE_DIR": shared, "NETRUNNER_MODEL_CHECK": nil])
        // Before the fix: killed by SIGSEGV (status 139 or the signal) on the planted verdict.
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("model-check verdicts are not kept: \(shared), above"))
        #expect(result.stderr.contains("is writable by other users"))
        #expect(result.stderr.contains("crashed on this model in a check process"))
        // Nothing written to the shared folder.
        #expect(try String(contentsOfFile: shared + "/model-checks/" + digest, encoding: .utf8) == planted)
    }

    @Test("A good model is checked once and its verdict kept by digest, whatever its path")
    func acceptedOnce() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (path, digest) = try Self.uniqueModel(in: folder, named: "good.tflite")
        let verdictFile = ModelGate.cacheFolder + "/" + digest
        #expect(!FileManager.default.fileExists(atPath: verdictFile))
        let model = try LoadedModel(.path(path))
        _ = try model.makeInterpreter()
        // The verdict, with the memory the check process grew by (at most a few MB for this model).
        let verdict = try String(contentsOfFile: verdictFile, encoding: .utf8)
        let header = "netrunner model check\nsha256 \(digest)\nruntime LiteRT \(Runtime.version)\naccepted memory "
        #expect(verdict.hasPrefix(header), "\(verdict)")
        let memory = Int(verdict.dropFirst(header.count).trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(memory.map { $0 >= 0 && $0 < 256 << 20 } == true, "\(verdict)")
        // The same bytes elsewhere: the remembered verdict, no new file.
        let copy = folder.path("copy.tflite")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        _ = try LoadedModel(.path(copy)).makeInterpreter()
        let pending = try FileManager.default.contentsOfDirectory(atPath: ModelGate.cacheFolder)
            .filter { $0.hasPrefix(".pending-\(digest.prefix(16))") }
        #expect(pending.isEmpty)
    }

    @Test("Trusted models skip the check")
    func trusted() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (path, digest) = try Self.uniqueModel(in: folder, named: "trusted.tflite")
        var model = try LoadedModel(.path(path))
        model.trust = .trusted
        _ = try model.makeInterpreter()
        #expect(!FileManager.default.fileExists(atPath: ModelGate.cacheFolder + "/" + digest))
    }

    @Test("A policy bound around work holds its models to its memory limit; the process's default stays none")
    func boundPolicy() async throws {
        // The 460-byte model of an 88 MB output tensor (about 177 MiB measured): within no limit,
        // refused under a policy of 64 MiB bound around the work only, as a server binds its own.
        let model = try LoadedModel(.path(Fixtures.path("Tests/Fixtures/Hostile/tile_88mb.tflite")))
        #expect(ModelGate.memoryLimit == nil && ModelGate.policy == nil)
        let policy = ModelGate.Policy(memoryLimit: 64 << 20, checkNiceness: ModelGate.serverNiceness)
        #expect(policy.checkNiceness == 10 && ModelGate.Policy(memoryLimit: -5, checkNiceness: 40).checkNiceness == 19)
        #expect(ModelGate.Policy(memoryLimit: -5).memoryLimit == 0)
        // Bound in an async scope, then read on a child task: a server's handlers inherit it.
        let refusal = await ModelGate.$policy.withValue(policy) {
            await Task {
                #expect(ModelGate.current == policy)
                do {
                    try ModelGate.admit(model)
                    return ""
                } catch {
                    return "\(error)"
                }
            }.value
        }
        #expect(refusal.contains("limit") && refusal.contains("(--max-model-memory)"), "\(refusal)")
        // Outside it, the process's default: no limit, the model admitted.
        #expect(ModelGate.current == ModelGate.Policy())
        try ModelGate.admit(model)
        // Passed explicitly, as the engine passes its configuration's.
        #expect(throws: InterpreterError.self) { try ModelGate.admit(model, policy: policy) }
    }
}
