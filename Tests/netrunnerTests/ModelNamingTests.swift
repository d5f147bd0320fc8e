import Foundation
import NetRunnerTestSupport
import Testing

/// One way to name a model (issue 25, section 2): `--model` and `evaluate --compare` take a
/// path, an id of the catalog (embedded, the models folder's, imports) or `hub:`, and
/// `netrunner models` lists the ids.
@Suite("Naming a model")
struct ModelNamingTests {
    static let coffee = Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")

    /// A working folder whose `Models/birds.tiobundle` is the float32 MobileNet with the id
    /// `birds`, as `netrunner import URL` leaves an import.
    static func workingFolder() throws -> TemporaryFolder {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path("Models"), withIntermediateDirectories: true)
        let bundle = folder.path("Models/birds.tiobundle")
        try FileManager.default.copyItem(
            atPath: Fixtures.path("Models/bundles/mobilenet_v2_1.0_224_float32.tiobundle"), toPath: bundle)
        let descriptionURL = URL(fileURLWithPath: bundle + "/model.json")
        var description = try #require(
            JSONSerialization.jsonObject(with: Data(contentsOf: descriptionURL)) as? [String: Any])
        description["id"] = "birds"
        try JSONSerialization.data(withJSONObject: description).write(to: descriptionURL)
        return folder
    }

    @Test("classify --model birds finds the models folder's bundle by its id")
    func classifyByID() throws {
        let folder = try Self.workingFolder()
        defer { folder.remove() }
        let run = try ProcessResult.run(
            Fixtures.netrunner, ["classify", "--model", "birds", Self.coffee], workingDirectory: folder.path(""))
        #expect(run.status == 0, "\(run.stderr)")
        // The float32 model's answer (the embedded uint8 model says 0.7969).
        #expect(run.stdout.contains("0.9869  espresso"), "\(run.stdout)")
    }

    @Test("An embedded short name and an embedded id both name the embedded model")
    func embeddedNames() throws {
        let folder = try Self.workingFolder()
        defer { folder.remove() }
        for name in ["mobilenet", "mobilenet-v2-1.0-224-uint8"] {
            let run = try ProcessResult.run(
                Fixtures.netrunner, ["classify", "--model", name, Self.coffee], workingDirectory: folder.path(""))
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout.contains("0.7969  espresso"), "\(name): \(run.stdout)")
        }
    }

    @Test("An unknown name is one message listing the ids, the closest first")
    func unknownName() throws {
        let folder = try Self.workingFolder()
        defer { folder.remove() }
        let run = try ProcessResult.run(
            Fixtures.netrunner, ["classify", "--model", "bird", Self.coffee], workingDirectory: folder.path(""))
        #expect(run.status != 0)
        #expect(run.stderr.contains("--model bird: no such file, and no model has that id (did you mean birds?)"))
        #expect(run.stderr.contains(": birds, mobilenet-v2-1.0-224-uint8, face-detection-short-range"), "\(run.stderr)")
        #expect(!run.stderr.contains("Failed to load"), "\(run.stderr)")
    }

    @Test("evaluate --compare takes an id of --models, and an unknown one blames --compare, not test.json")
    func evaluateCompare() throws {
        let folder = try Self.workingFolder()
        defer { folder.remove() }
        let test = Fixtures.path("TestBundles/imagenet-sample.testbundle")
        let run = try ProcessResult.run(
            Fixtures.netrunner,
            [
                "evaluate", test, "--models", folder.path("Models"), "--compare", "birds", "--output",
                folder.path("out"),
                "--no-progress",
            ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("  birds: 8/8 images"), "\(run.stdout)")
        let unknown = try ProcessResult.run(
            Fixtures.netrunner,
            [
                "evaluate", test, "--models", folder.path("Models"), "--compare", "bird", "--output",
                folder.path("out2"),
                "--no-progress",
            ])
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("--compare bird: no such file"), "\(unknown.stderr)")
        #expect(unknown.stderr.contains("did you mean birds?"), "\(unknown.stderr)")
        #expect(!unknown.stderr.contains("test.json"), "\(unknown.stderr)")
    }

    @Test("netrunner models (and list) prints id, task and origin; --json one object a line")
    func listing() throws {
        let folder = try Self.workingFolder()
        defer { folder.remove() }
        let text = try ProcessResult.run(Fixtures.netrunner, ["models"], workingDirectory: folder.path(""))
        #expect(text.status == 0, "\(text.stderr)")
        let rows = text.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(
            rows == [
                ["mobilenet-v2-1.0-224-uint8", "classification", "embedded"],
                ["face-detection-short-range", "detection", "embedded"],
                ["birds", "classification", "Models/birds.tiobundle"],
            ])
        let json = try ProcessResult.run(Fixtures.netrunner, ["list", "--json"], workingDirectory: folder.path(""))
        #expect(json.status == 0, "\(json.stderr)")
        let objects = try json.stdout.split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String]
        }
        #expect(objects.last == ["id": "birds", "task": "classification", "origin": "Models/birds.tiobundle"])
        #expect(objects.count == 3)
    }

    /// Issue 25: with the repository's Models folder, serve listed 11 models for 4 networks.
    @Test("A network is listed and served once: the bundle, else the embedded model, over a copy of its file")
    func oneNetworkOnce() throws {
        let folder = try Self.workingFolder()
        defer { folder.remove() }
        // Bare copies of the bundle's model file and of the embedded classifier's.
        try FileManager.default.copyItem(
            atPath: Fixtures.path("Models/mobilenet_v2_1.0_224_float32.tflite"),
            toPath: folder.path("Models/copy.tflite"))
        try FileManager.default.copyItem(
            atPath: Fixtures.path("Models/mobilenet_v2_1.0_224_uint8.tflite"),
            toPath: folder.path("Models/uint8.tflite"))
        try FileManager.default.copyItem(
            atPath: Fixtures.path("Models/mobilenet_v2_1.0_224_int8.tflite"), toPath: folder.path("Models/int8.tflite"))
        let text = try ProcessResult.run(Fixtures.netrunner, ["models"], workingDirectory: folder.path(""))
        #expect(text.status == 0, "\(text.stderr)")
        let ids = text.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }
        #expect(ids == ["mobilenet-v2-1.0-224-uint8", "face-detection-short-range", "birds", "int8"])
        #expect(
            text.stderr.contains("note: 2 model files are the same as another model's, listed once: "), "\(text.stderr)"
        )
        #expect(
            text.stderr.contains("copy as birds") && text.stderr.contains("uint8 as mobilenet-v2-1.0-224-uint8"),
            "\(text.stderr)")
        #expect(text.stderr.components(separatedBy: "note:").count == 2, "one note: \(text.stderr)")
        // A copy's id still names it on the command line.
        let classify = try ProcessResult.run(
            Fixtures.netrunner, ["classify", "--model", "copy", Self.coffee, "--json"],
            workingDirectory: folder.path(""))
        #expect(classify.status == 0, "\(classify.stderr)")
    }
}
