import Foundation
import NetRunnerTestSupport
import Testing

/// Models by id from any folder (issue 44, item 2): the models installed with NetRunner
/// (`share/netrunner/models` beside its `bin/`), and the user's own folder set once in the
/// environment or the settings file, flags first.
@Suite("Settings: the models folder and the installed models")
struct UserSettingsCommandTests {
    static let squat = Fixtures.path("Tests/Fixtures/Pose/squat.png")

    /// Runs the tool in `folder` with `environment` (a settings file nobody has, unless given).
    static func run(
        _ arguments: [String], in folder: String, environment: [String: String?] = [:],
        tool: String = Fixtures.netrunner
    ) throws -> ProcessResult {
        var environment = environment
        if environment["NETRUNNER_CONFIG"] == nil { environment["NETRUNNER_CONFIG"] = folder + "/no-settings.json" }
        if environment["NETRUNNER_MODELS"] == nil { environment["NETRUNNER_MODELS"] = .some(nil) }
        return try ProcessResult.run(tool, arguments, environment: environment, workingDirectory: folder)
    }

    /// The `inference_results` of a `--json` line, as JSON text with sorted keys (the timings left out).
    static func results(_ run: ProcessResult) throws -> String {
        let line = try #require(
            try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout)")
        let results = try #require(line["inference_results"], "\(run.stdout)")
        return String(
            decoding: try JSONSerialization.data(withJSONObject: results, options: .sortedKeys), as: UTF8.self)
    }

    /// The ids `netrunner models` lists, in order.
    static func ids(_ run: ProcessResult) -> [String] {
        run.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }
    }

    @Test("An installed copy finds its bundled models by id from a folder without Models/, answering as by path")
    func installedModels() throws {
        let root = try TemporaryFolder(prefix: "netrunner-installed")
        defer { root.remove() }
        // The make install layout: PREFIX/bin/netrunner, PREFIX/share/netrunner/models/.
        let prefix = root.path("prefix")
        try FileManager.default.createDirectory(atPath: prefix + "/bin", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(
            atPath: prefix + "/share/netrunner/models", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Fixtures.netrunner, toPath: prefix + "/bin/netrunner")
        let bundle = "movenet_single_pose_lightning_ptq.tiobundle"
        try FileManager.default.copyItem(
            atPath: Fixtures.path("Models/bundles/" + bundle), toPath: prefix + "/share/netrunner/models/" + bundle)
        let work = root.path("work")
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)

        let listed = try Self.run(["models"], in: work, tool: prefix + "/bin/netrunner")
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(
            listed.stdout.contains("pose") && listed.stdout.contains(prefix + "/share/netrunner/models/" + bundle),
            "\(listed.stdout)")

        let byID = try Self.run(
            ["pose", "--model", "movenet-single-pose-lightning-ptq", "--json", Self.squat], in: work,
            tool: prefix + "/bin/netrunner")
        #expect(byID.status == 0, "\(byID.stderr)")
        let byPath = try Self.run(
            ["pose", "--model", Fixtures.path("Models/bundles/" + bundle), "--json", Self.squat], in: work)
        #expect(byPath.status == 0, "\(byPath.stderr)")
        #expect(try Self.results(byID) == Self.results(byPath), "\(byID.stdout)\n\(byPath.stdout)")

        // Without --model, pose runs the installed MoveNet.
        let byDefault = try Self.run(["pose", "--json", Self.squat], in: work, tool: prefix + "/bin/netrunner")
        #expect(try Self.results(byDefault) == Self.results(byPath), "\(byDefault.stderr)")

        // The build in .build/ has no share/netrunner beside it: the id is unknown there, and
        // pose without --model says how to give one.
        let none = try Self.run(["pose", Self.squat], in: work)
        #expect(none.status != 0 && none.stderr.contains("none is installed"), "\(none.stderr)")
        let plain = try Self.run(["pose", "--model", "movenet-single-pose-lightning-ptq", Self.squat], in: work)
        #expect(plain.status != 0 && plain.stderr.contains("no model has that id"), "\(plain.stderr)")
    }

    @Test("The models folder: --models over NETRUNNER_MODELS over the settings file over ./Models")
    func precedence() throws {
        let root = try TemporaryFolder(prefix: "netrunner-settings")
        defer { root.remove() }
        let model = Fixtures.path("Models/mobilenet_v2_1.0_224_int8.tflite")
        for name in ["Models/from-default", "file-models/from-file", "env-models/from-env", "flag-models/from-flag"] {
            let folder = root.path(String(name.split(separator: "/")[0]))
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: model, toPath: root.path(name + ".tflite"))
        }
        let settings = root.path("config.json")
        try Data(#"{"models": "\#(root.path("file-models"))", "hub": "http://127.0.0.1:9"}"#.utf8).write(
            to: URL(fileURLWithPath: settings))
        let folder = root.path("")

        let plain = try Self.run(["models"], in: folder)
        #expect(Self.ids(plain).contains("from-default"), "\(plain.stdout)\(plain.stderr)")
        let file = try Self.run(["models"], in: folder, environment: ["NETRUNNER_CONFIG": settings])
        #expect(Self.ids(file).contains("from-file") && !Self.ids(file).contains("from-default"), "\(file.stdout)")
        let environment = try Self.run(
            ["models"], in: folder,
            environment: ["NETRUNNER_CONFIG": settings, "NETRUNNER_MODELS": root.path("env-models")])
        #expect(
            Self.ids(environment).contains("from-env") && !Self.ids(environment).contains("from-file"),
            "\(environment.stdout)")
        let flag = try Self.run(
            ["models", "--models", root.path("flag-models")], in: folder,
            environment: ["NETRUNNER_CONFIG": settings, "NETRUNNER_MODELS": root.path("env-models")])
        #expect(Self.ids(flag).contains("from-flag") && !Self.ids(flag).contains("from-env"), "\(flag.stdout)")

        // The settings file's hub is the hub of hub: models (nothing listens on port 9).
        let name = "hub:settings-" + UUID().uuidString.prefix(8)
        let hub = try Self.run(
            [
                "classify", "--model", name,
                Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg"),
            ], in: folder, environment: ["NETRUNNER_CONFIG": settings, "NETRUNNER_HUB": nil])
        #expect(hub.status != 0 && hub.stderr.contains("http://127.0.0.1:9"), "\(hub.stderr)")
    }

    @Test(
        "A wrong settings file or a missing folder is one message naming it",
        arguments: [
            (#"{"modles": "/srv"}"#, "names an unknown setting \"modles\" (did you mean models?)"),
            (#"{"models": "models"}"#, "gives \"models\" the relative path models"),
            (#"{"models": 7}"#, "gives \"models\" a value that is not a string"),
            ("models=/srv", "is not a JSON object of settings"),
        ])
    func wrongFile(text: String, message: String) throws {
        let root = try TemporaryFolder(prefix: "netrunner-settings")
        defer { root.remove() }
        let settings = root.path("config.json")
        try Data(text.utf8).write(to: URL(fileURLWithPath: settings))
        let run = try Self.run(["models"], in: root.path(""), environment: ["NETRUNNER_CONFIG": settings])
        #expect(run.status != 0)
        #expect(run.stderr.contains("The settings file \(settings) \(message)"), "\(run.stderr)")
        #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")

        let missing = try Self.run(
            ["models"], in: root.path(""), environment: ["NETRUNNER_MODELS": root.path("nowhere")])
        #expect(missing.status != 0)
        #expect(
            missing.stderr.contains("NETRUNNER_MODELS=\(root.path("nowhere")) is not a folder of models"),
            "\(missing.stderr)")
    }
}
