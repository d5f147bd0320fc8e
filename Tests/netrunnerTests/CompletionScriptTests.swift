import Foundation
import NetRunnerTestSupport
import Testing

/// The completion scripts `make install` and the package install (issue 53): `netrunner
/// --generate-completion-script SHELL` completes `serve`, `hub` and `import` with their own flags
/// and subcommands, which live in `netrunner-net`, as well as the commands of `netrunner`.
@Suite("Completion scripts: serve, hub and import complete too")
struct CompletionScriptTests {
    /// `netrunner ARGUMENTS`'s output, checked to have succeeded.
    static func script(_ shell: String, tool: String = Fixtures.netrunner) async throws -> String {
        let result = try await OffPool.run { try ProcessResult.run(tool, ["--generate-completion-script", shell]) }
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout
    }

    /// What bash offers at the end of `line` (`netrunner serve --`), the script sourced as
    /// bash-completion sources it: `COMPREPLY` after the completion function runs.
    static func bashCompletions(_ script: String, _ line: String) async throws -> [String] {
        let folder = try TemporaryFolder(prefix: "netrunner-completion")
        defer { folder.remove() }
        let file = folder.path("netrunner.bash")
        try script.write(toFile: file, atomically: true, encoding: .utf8)
        let driver = """
            source "$1"
            line="$2"
            read -ra COMP_WORDS <<<"$line"
            [[ "$line" == *" " ]] && COMP_WORDS+=("")
            COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
            COMP_LINE="$line"
            COMP_POINT=${#line}
            _netrunner netrunner "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let result = try await OffPool.run { try ProcessResult.run("/bin/bash", ["-c", driver, "bash", file, line]) }
        #expect(result.status == 0, "\(line): \(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test("bash: netrunner serve --, hub, hub serve --d, import -- and classify --mo complete")
    func bash() async throws {
        let script = try await Self.script("bash")
        let cases: [(line: String, expected: [String])] = [
            ("netrunner ", ["serve", "hub", "import", "classify", "bulk"]),
            ("netrunner serve --", ["--port", "--models", "--api-keys-file", "--max-upload-bytes", "--idle-timeout"]),
            ("netrunner serve --accelerator ", ["cpu", "gpu", "auto"]),
            ("netrunner hub ", ["serve", "push", "pull", "key", "alias", "gate"]),
            ("netrunner hub serve --d", ["--data", "--database", "--drain-timeout"]),
            ("netrunner hub key --", ["--scope", "--hub", "--token"]),
            ("netrunner import --", ["--models", "--sha256", "--replace"]),
            ("netrunner classify --mo", ["--model", "--models"]),
        ]
        for (line, expected) in cases {
            let offered = try await Self.bashCompletions(script, line)
            for word in expected {
                #expect(offered.contains(word), "`\(line)<TAB>` offers \(offered), not \(word)")
            }
        }
        // What the stub alone offered before: nothing of serve's own.
        let classify = try await Self.bashCompletions(script, "netrunner classify --")
        #expect(!classify.contains("--port"), "classify offers serve's --port: \(classify)")
    }

    @Test("zsh and fish: serve's, hub's and import's flags are in the scripts, under their commands")
    func zshAndFish() async throws {
        let zsh = try await Self.script("zsh")
        let serve = try #require(zsh.range(of: "_netrunner_serve() {"), "no _netrunner_serve in the zsh script")
        let rest = zsh[serve.upperBound...]
        let serveBody = rest[..<(rest.range(of: "\n}\n")?.lowerBound ?? rest.endIndex)]
        #expect(serveBody.contains("'--port["), "\(serveBody.prefix(600))")
        #expect(zsh.contains("_netrunner_hub_serve() {") && zsh.contains("_netrunner_hub_key() {"))
        #expect(zsh.contains("_netrunner_import() {") && zsh.contains("_netrunner_classify() {"))
        let fish = try await Self.script("fish")
        #expect(fish.contains("case 'serve'") && fish.contains("'port='"), "fish: no serve with port=")
        #expect(fish.contains("'data='") && fish.contains("'scope='") && fish.contains("'sha256='"))
    }

    @Test("netrunner-net writes the same script; netrunner alone writes its own commands'")
    func sameScript() async throws {
        let net = URL(fileURLWithPath: Fixtures.netrunner).deletingLastPathComponent().appendingPathComponent(
            "netrunner-net"
        ).path
        #expect(try await Self.script("bash", tool: net) == Self.script("bash"))
        // A netrunner without netrunner-net beside it (a copy alone) still writes a script.
        let folder = try TemporaryFolder(prefix: "netrunner-alone")
        defer { folder.remove() }
        let alone = folder.path("netrunner")
        try FileManager.default.copyItem(atPath: Fixtures.netrunner, toPath: alone)
        let own = try await Self.script("bash", tool: alone)
        #expect(own.contains("_netrunner_classify()"))
        #expect(try await Self.bashCompletions(own, "netrunner serve --").contains("--port") == false)
    }
}
