public import Foundation

/// Paths of the committed fixtures: models, photos and the Python reference.
public enum Fixtures {
    /// The repository's root folder.
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // NetRunnerTestSupport
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()

    /// The absolute path of a file given relative to the repository root.
    public static func path(_ relative: String) -> String {
        root.appendingPathComponent(relative).path
    }

    /// The bytes of a file given relative to the repository root.
    public static func data(_ relative: String) throws -> Data {
        try Data(contentsOf: root.appendingPathComponent(relative))
    }

    /// The real ImageNet MobileNetV2 models, converted by `tools/models/make_mobilenet_v2.py`.
    public enum MobileNet {
        public static let float32 = "Models/mobilenet_v2_1.0_224_float32.tflite"
        public static let uint8 = "Models/mobilenet_v2_1.0_224_uint8.tflite"
        public static let int8 = "Models/mobilenet_v2_1.0_224_int8.tflite"
        public static let labels = "Models/imagenet_labels.txt"
    }

    /// Small synthetic models made by `tools/models/make_synthetic.py`.
    public enum Synthetic {
        public static let multiSignature = "Tests/Fixtures/Models/multi_signature.tflite"
        public static let dynamicBatch = "Tests/Fixtures/Models/dynamic_batch.tflite"
        public static let multiIO = "Tests/Fixtures/Models/multi_io.tflite"
        public static let extraTypes = "Tests/Fixtures/Models/extra_types.tflite"
        public static let int16 = "Tests/Fixtures/Models/int16_fc.tflite"
        public static let float16Input = "Tests/Fixtures/Models/float16_input.tflite"
        public static let perChannelInput = "Tests/Fixtures/Models/per_channel_input.tflite"
        public static let stringIO = "Tests/Fixtures/Models/string_io.tflite"
    }

    /// The recorded Python reference (`tools/models/record_reference.py`).
    ///
    /// `make test` records it on this machine first (`scripts/record-local-reference.sh`, into the
    /// folder `NETRUNNER_TEST_REFERENCE` names): XNNPACK's float kernels differ in the last bit
    /// between CPUs, and "bit for bit equal to Python" means Python on the same CPU. Without the
    /// variable, the committed record (made on another machine).
    public static func reference() throws -> Reference {
        if let folder = ProcessInfo.processInfo.environment["NETRUNNER_TEST_REFERENCE"], !folder.isEmpty {
            return try JSONDecoder().decode(
                Reference.self, from: Data(contentsOf: URL(fileURLWithPath: folder + "/reference.json")))
        }
        return try JSONDecoder().decode(Reference.self, from: data("Tests/Fixtures/Reference/reference.json"))
    }

    /// A recorded output of the Python reference (a file of `Tests/Fixtures/Reference`, by name),
    /// recorded on this machine's CPU when `NETRUNNER_TEST_REFERENCE` names that record: every
    /// expected output that depends on the CPU's kernels is read through here (`make lint`
    /// refuses a test that reads `__out` files from the committed folder directly), so
    /// `make test` passes on any CPU. Inputs, which do not depend on the CPU, are read with
    /// ``data(_:)``.
    ///
    /// - Parameter name: The file's name, such as `mobilenet_v2_1.0_224_uint8__chelsea__t1__out0.bin`.
    /// - Returns: Its bytes.
    public static func referenceOutput(_ name: String) throws -> Data {
        if let folder = ProcessInfo.processInfo.environment["NETRUNNER_TEST_REFERENCE"], !folder.isEmpty {
            return try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))
        }
        return try data("Tests/Fixtures/Reference/" + name)
    }

    /// The folder holding the test executables and the built `netrunner` tool.
    public static var productsFolder: URL {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let path = String(decoding: buffer.prefix(max(count, 0)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        // On Linux the test runner is <products>/NetRunnerPackageTests.xctest.
        if folder.pathExtension == "xctest" { folder.deleteLastPathComponent() }
        return folder
    }

    /// The `netrunner` executable built with the tests, or the one `NETRUNNER_TEST_TOOL` names
    /// (`make test-asan` builds the lower modules only and runs the plain build's tool).
    public static var netrunner: String {
        if let tool = ProcessInfo.processInfo.environment["NETRUNNER_TEST_TOOL"], !tool.isEmpty { return tool }
        return productsFolder.appendingPathComponent("netrunner").path
    }
}
