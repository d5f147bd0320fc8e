import Foundation
import NetRunnerTestSupport
import Testing

/// What a new user hit (issue 33): mistyped commands and folders, a missing ffmpeg.
@Suite("Right the first time")
struct FirstRunTests {
    @Test("A mistyped command says which command was meant, as a mistyped flag does")
    func mistypedCommand() throws {
        let photo = Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")
        let core = try ProcessResult.run(Fixtures.netrunner, ["clasify", photo])
        // Before: "Error: 2 unexpected arguments: 'clasify', '…coffee.jpg'".
        #expect(core.status == 64)
        #expect(
            core.stderr.hasPrefix(
                "Error: 'clasify' is not a netrunner command. Did you mean 'classify'? See 'netrunner --help'"),
            "\(core.stderr)")
        let hub = try ProcessResult.run(Fixtures.netrunner, ["hub", "lst"])
        #expect(hub.status == 64)
        #expect(hub.stderr.contains("'lst' is not a netrunner hub command. Did you mean 'list'?"), "\(hub.stderr)")
        let far = try ProcessResult.run(Fixtures.netrunner, ["zzzzzzzz"])
        #expect(far.status == 64 && far.stderr.contains("'zzzzzzzz' is not a netrunner command."), "\(far.stderr)")
        // Words that name commands still run them.
        #expect(try ProcessResult.run(Fixtures.netrunner, ["bundle", "--help"]).status == 0)
    }

    @Test("serve refuses a --models folder that does not exist, naming the closest, and makes nothing")
    func mistypedModelsFolder() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try FileManager.default.createDirectory(atPath: folder.path("Models"), withIntermediateDirectories: true)
        let run = try ProcessResult.run(
            Fixtures.netrunner, ["serve", "--port", "0", "--models", "Modles"], workingDirectory: folder.url.path)
        // Before: the folder was made, and the server ran with no models of its own.
        #expect(run.status == 64, "\(run.stderr)")
        #expect(
            run.stderr.contains(
                "--models Modles does not exist (did you mean Models?). To start an empty models folder for imports, make it first: mkdir Modles"
            ), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.path("Modles")))
    }

    @Test("stream without ffmpeg says only that, without an all-zero summary")
    func streamWithoutFFmpeg() throws {
        let run = try ProcessResult.run(
            Fixtures.netrunner, ["stream", Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")],
            environment: ["NETRUNNER_FFMPEG": "/nonexistent/ffmpeg"])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("/nonexistent/ffmpeg was not found"), "\(run.stderr)")
        #expect(!run.stderr.contains("0 decoded"), "\(run.stderr)")
    }
}
