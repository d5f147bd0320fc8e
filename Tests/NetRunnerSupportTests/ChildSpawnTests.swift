import Foundation
import Testing

@testable import NetRunnerSupport

/// The one spawner of the decoder processes and the gates' evaluations: streams, environment,
/// process group, and how a child ended.
@Suite("ChildSpawn")
struct ChildSpawnTests {
    /// Waits for `pid` and says how it ended.
    func wait(_ pid: Int32) -> ChildSpawn.Ending {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return ChildSpawn.Ending(status: status)
    }

    @Test("Standard output to a file, standard error with it; the variables given over this process's")
    func streamsAndEnvironment() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("spawn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = folder.appendingPathComponent("log").path
        let script = "read line; echo \"in:$line out:$SPAWN_TEST home:${HOME:+set}\"; echo err >&2; exit 3"
        let pid = try ChildSpawn.spawn(
            ["/bin/sh", "-c", script], stdin: .null, stdout: .file(log), stderr: .stdout,
            environment: ["SPAWN_TEST": "given"]
        ).get()
        #expect(wait(pid) == .exited(3))
        let text = try String(contentsOfFile: log, encoding: .utf8)
        // stdin is /dev/null (read finds nothing), HOME is still this process's.
        #expect(text == "in: out:given home:set\nerr\n", "\(text)")
        // No variables of its own: exactly this process's environment.
        let plain = try ChildSpawn.spawn(
            ["/bin/sh", "-c", "echo ${SPAWN_TEST:-unset}"], stdin: .null, stdout: .file(log), stderr: .null
        ).get()
        #expect(wait(plain) == .exited(0))
        #expect(try String(contentsOfFile: log, encoding: .utf8) == "unset\n")
    }

    @Test("A crash ends the child with its signal, whatever this process blocks; a group of its own")
    func signalsAndGroup() throws {
        let pid = try ChildSpawn.spawn(
            ["/bin/sh", "-c", "kill -SEGV $$"], stdin: .null, stdout: .null, stderr: .null, processGroup: true
        ).get()
        // Its own group, read before it is reaped (a zombie keeps its group).
        #expect(getpgid(pid) == pid)
        let ending = wait(pid)
        #expect(ending == .signaled(SIGSEGV) && ending.shellCode == 128 + SIGSEGV)
        // glibc's posix_spawn reports the exec's error.
        #expect(
            ChildSpawn.spawn(["/nonexistent/program"], stdin: .null, stdout: .null, stderr: .null)
                == .failure(ChildSpawn.Failure(code: ENOENT)))
        #expect(throws: ChildSpawn.Failure.self) {
            try ChildSpawn.spawn([], stdin: .null, stdout: .null, stderr: .null).get()
        }
    }
}
