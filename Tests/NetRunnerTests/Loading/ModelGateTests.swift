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
        let verdict = try String(
            contentsOfFile: ModelGate.cacheFolder + "/" + SHA256.hexDigest(of: data), encoding: .utf8)
        #expect(verdict.hasPrefix("refused the runtime crashed"))
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
        #expect(try String(contentsOfFile: verdictFile, encoding: .utf8) == "accepted\n")
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
}
