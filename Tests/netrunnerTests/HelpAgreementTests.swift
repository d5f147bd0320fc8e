import Foundation
import NetRunnerTestSupport
import Testing

/// Help and options that agree: every command's `--help` shows the flags it takes, each default
/// once, `--threads` in one meaning, and `run` and `check` take what `classify` takes.
@Suite("Help and options agree")
struct HelpAgreementTests {
    func netrunner(_ arguments: [String]) throws -> ProcessResult {
        // A fixed width, so wrapped help reads the same on every terminal.
        try ProcessResult.run(Fixtures.netrunner, arguments, environment: ["COLUMNS": "100"])
    }

    /// The names in a help text's SUBCOMMANDS sections (`netrunner --help` has one per group:
    /// `TASKS SUBCOMMANDS:`, `MODELS SUBCOMMANDS:`, ...).
    static func subcommands(in help: String) -> [String] {
        guard let start = help.firstRange(of: /\n([A-Z ]+ )?SUBCOMMANDS:\n/) else { return [] }
        return help[start.upperBound...].split(separator: "\n").compactMap { line in
            // Entries are indented two spaces; their wrapped descriptions further; the next
            // group's header is not indented.
            guard line.hasPrefix("  "), !line.hasPrefix("   "), !line.contains("See '") else { return nil }
            // "models, list": a command and its aliases; the first name is the command.
            return line.split(separator: " ").first.map { String($0.prefix { $0 != "," }) }
        }
    }

    /// Every command and subcommand, as `netrunner help` and each command's help list them.
    func allCommands() throws -> [[String]] {
        var found: [[String]] = []
        var pending: [[String]] = Self.subcommands(in: try netrunner(["help"]).stdout).map { [$0] }
        while let command = pending.first {
            pending.removeFirst()
            found.append(command)
            let help = try netrunner(command + ["--help"]).stdout
            pending += Self.subcommands(in: help).map { command + [$0] }
        }
        return found
    }

    /// The entries of a help text's ARGUMENTS and OPTIONS sections, each on one line: its
    /// first line (`--flag <value>`) and its description's lines joined.
    static func optionEntries(in help: String) -> [String] {
        var entries: [String] = []
        var inSection = false
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "ARGUMENTS:" || line == "OPTIONS:" {
                inSection = true
            } else if line.isEmpty || !line.hasPrefix(" ") {
                inSection = false
            } else if inSection {
                let text = line.trimmingCharacters(in: .whitespaces)
                if line.hasPrefix("  -") || line.hasPrefix("  <") {
                    entries.append(text)
                } else if !entries.isEmpty {
                    entries[entries.count - 1] += " " + text
                }
            }
        }
        return entries
    }

    /// The flag names an entry starts with: `-k, --max-results, --top <max-results> ...` names
    /// `-k`, `--max-results` and `--top`.
    static func names(of entry: String) -> [String] {
        entry.split(separator: " ").prefix { $0.hasPrefix("-") }.map { String($0).trimmingCharacters(in: [","]) }
    }

    @Test("bulk --help and evaluate --help show the flags of bulk DIR and evaluate TESTBUNDLE")
    func parentHelpShowsDefaultFlags() throws {
        for (command, flags) in [
            (
                "bulk",
                ["--output", "--threads", "--runtime-threads", "--model", "--max-results", "--shard", "--restart"]
            ),
            ("evaluate", ["--models", "--compare", "--output", "--runtime-threads", "--shard", "--restart"]),
        ] {
            for arguments in [[command, "--help"], ["help", command]] {
                let result = try netrunner(arguments)
                #expect(result.status == 0)
                let options = Self.optionEntries(in: result.stdout)
                for flag in flags {
                    #expect(
                        options.contains { Self.names(of: $0).contains(flag) },
                        "\(arguments) lacks \(flag): \(result.stdout)")
                }
                // Spelled as it is used (`bulk DIR`, not `bulk images DIR`), and the other
                // subcommand still listed.
                #expect(result.stdout.contains("USAGE: netrunner \(command) "))
                #expect(
                    !result.stdout.contains("netrunner \(command) images")
                        && !result.stdout.contains("netrunner \(command) run "))
                #expect(Self.subcommands(in: result.stdout).contains("merge"))
                #expect(result.stdout.contains("help information.\n\nSUBCOMMANDS:\n"))
            }
        }
    }

    @Test("No option of any command states its default twice")
    func defaultsOnce() throws {
        let commands = try allCommands()
        #expect(commands.count > 20, "\(commands)")
        #expect(commands.contains(["hub", "serve"]) && commands.contains(["bulk", "images"]))
        var doubled: [String] = []
        for command in commands {
            let help = try netrunner(command + ["--help"])
            #expect(help.status == 0, "\(command)")
            for entry in Self.optionEntries(in: help.stdout) {
                let count = entry.lowercased().components(separatedBy: "default").count - 1
                guard count > 1 else { continue }
                let flag = Self.names(of: entry).first { $0.hasPrefix("--") } ?? String(entry.prefix { $0 != " " })
                let name = (command + [flag]).joined(separator: " ")
                doubled.append("\(name): \(entry)")
            }
        }
        #expect(doubled.isEmpty, "\(doubled.joined(separator: "\n"))")
    }

    /// The help entry of a flag in a command's help.
    func entry(_ flag: String, of command: [String]) throws -> String? {
        let help = try netrunner(command + ["--help"]).stdout
        return Self.optionEntries(in: help).first { Self.names(of: $0).contains(flag) }
    }

    @Test(
        "Every image command lists the nine decoded formats; pose, segment and embed say their default is the installed model"
    )
    func imagesAndRequiredModel() throws {
        let formats = "JPEG, PNG, BMP, PNM, WebP, GIF, TIFF, HEIC, AVIF"
        for command in [["classify"], ["detect"], ["segment"], ["pose"], ["embed"], ["bulk", "images"]] {
            let help = try netrunner(command + ["--help"]).stdout
            let images = try #require(Self.optionEntries(in: help).first { $0.hasPrefix("<images>") }, "\(command)")
            #expect(images.contains("Image files (\(formats)) or folders"), "\(command): \(images)")
        }
        for command in ["pose", "segment", "embed"] {
            let model = try #require(try entry("--model", of: [command]))
            #expect(
                model.hasSuffix(
                    "(default: the model installed for this task with NetRunner (MoveNet for pose, DeepLab v3 for "
                        + "segment, MobileNet V1's embedding extractor for embed); required where NetRunner is not "
                        + "installed: none is built in)."),
                "\(command): \(model)")
        }
        for command in ["classify", "detect"] {
            #expect(try entry("--model", of: [command])?.hasSuffix("(default: the embedded model).") == true)
        }
    }

    @Test("--threads counts interpreters side by side; threads inside one interpreter are --runtime-threads")
    func threadsMeanOneThing() throws {
        for command in [["classify"], ["detect"], ["bulk", "images"]] {
            let threads = try #require(try entry("--threads", of: command), "\(command)")
            #expect(threads.contains("side by side") && threads.contains("--runtime-threads"), "\(threads)")
            let runtime = try #require(try entry("--runtime-threads", of: command), "\(command)")
            #expect(runtime.contains("inside each interpreter"), "\(runtime)")
        }
        for command in [["bench"], ["check"], ["run"], ["evaluate", "run"]] {
            #expect(try entry("--threads", of: command) == nil, "\(command) shows --threads")
            let runtime = try #require(try entry("--runtime-threads", of: command), "\(command)")
            #expect(runtime.contains("inside"), "\(runtime)")
        }
        // The new name works, and the old spelling still does where it meant the same.
        let photo = Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")
        let classify = try netrunner(["classify", "--threads", "2", "--runtime-threads", "2", photo, photo])
        #expect(classify.status == 0, "\(classify.stderr)")
        #expect(classify.stdout.contains("espresso"))
        let model = Fixtures.path(Fixtures.MobileNet.int8)
        for flag in ["--runtime-threads", "--threads", "--num_threads"] {
            let bench = try netrunner(["bench", "--json", "--runs", "2", flag, "2", model])
            #expect(bench.status == 0, "\(flag): \(bench.stderr)")
            #expect(
                bench.stdout.contains("\"threads\":2") || bench.stdout.contains("\"threads\" : 2"), "\(bench.stdout)")
        }
        let tooMany = try netrunner(["classify", "--runtime-threads", "0", photo])
        #expect(tooMany.status == 64 && tooMany.stderr.contains("--runtime-threads must be between 1 and"))
    }

    @Test("check takes a bundle folder, by the model file its model.json names")
    func checkTakesBundles() throws {
        let bundle = Fixtures.path("Models/bundles/mobilenet_v2_1.0_224_uint8.tiobundle")
        let result = try netrunner(["check", bundle])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout == "accepted  \(bundle)\n")
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let broken = folder.path("broken.tiobundle")
        try FileManager.default.createDirectory(atPath: broken, withIntermediateDirectories: true)
        try Data(#"{"name": "x"}"#.utf8).write(to: URL(fileURLWithPath: broken + "/model.json"))
        let bad = try netrunner(["check", broken])
        #expect(bad.status == 1)
        #expect(bad.stdout.hasPrefix("rejected  \(broken): "), "\(bad.stdout)")
    }

    @Test("run takes --model, --max-results and --score-threshold as classify does, and prints the same label names")
    func runAgreesWithClassify() throws {
        let bundle = Fixtures.path("Tests/Fixtures/Bundles/mobilenet_v2_1.0_224_float32.tiobundle")
        let eagle = Fixtures.path("Tests/Fixtures/Photos/test/eagle.jpg")
        let names = { (text: String) in
            text.split(separator: "\n").dropFirst().map {
                $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst()
                    .filter { !$0.hasPrefix("[") }.joined(separator: " ")
            }
        }
        let run = try netrunner(["run", "--model", bundle, eagle, "--max-results", "1"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "\(eagle)\n  0.6851  bald eagle\n")
        let positional = try netrunner(["run", bundle, eagle, "--score-threshold", "0.15"])
        let classify = try netrunner(["classify", "--model", bundle, "--score-threshold", "0.15", eagle])
        #expect(positional.status == 0 && classify.status == 0, "\(positional.stderr)\(classify.stderr)")
        #expect(names(positional.stdout) == ["bald eagle", "kite"], "\(positional.stdout)")
        #expect(names(positional.stdout) == names(classify.stdout), "\(classify.stdout)")
        let threshold = try netrunner(["run", "--model", bundle, "--score-threshold", "0.5", eagle])
        #expect(names(threshold.stdout) == ["bald eagle"], "\(threshold.stdout)")
        let none = try netrunner(["run", "--max-results", "1"])
        #expect(none.status == 64 && none.stderr.contains("Name the model"), "\(none.stderr)")
    }
}
