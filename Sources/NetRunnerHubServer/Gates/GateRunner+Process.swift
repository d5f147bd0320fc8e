import NetRunnerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An evaluation's child process: `netrunner evaluate` in a process group of its own, niced,
/// killed past its timeout.
extension GateRunner {
    /// Runs `arguments[0]` in a process group of its own at `niceness`, stdout and stderr to
    /// `log`; its exit status, -1 when it was killed for taking longer than `timeout`, -2 when
    /// it could not start.
    static func runProcess(
        _ arguments: [String], log: String, timeout: Duration, niceness: Int32 = 0,
        started: @Sendable (pid_t) async -> Void = { _ in },
        ended: @Sendable (pid_t) async -> Void = { _ in }
    ) async -> Int32 {
        let spawned = ChildSpawn.spawn(arguments, stdin: .null, stdout: .file(log), stderr: .stdout, processGroup: true)
        guard case .success(let pid) = spawned else { return -2 }
        let child = pid
        // Below the hub's threads: posix_spawn returns once the child has exec'd, before it
        // starts threads of its own, which inherit it (Linux's nice is per thread).
        #if canImport(Glibc)
            let which = __priority_which_t(PRIO_PROCESS.rawValue)
        #else
            let which = PRIO_PROCESS
        #endif
        if niceness > 0 { _ = setpriority(which, id_t(child), niceness) }
        await started(child)
        // Polled: a blocking wait would hold one of Swift's few threads for minutes.
        let deadline = ContinuousClock.now + timeout
        var status: Int32 = 0
        var result: Int32?
        while result == nil {
            let done = waitpid(child, &status, WNOHANG)
            if done == child {
                result = ChildSpawn.Ending(status: status).shellCode
            } else if done < 0 && errno != EINTR {
                result = -2
            } else if ContinuousClock.now >= deadline {
                kill(-child, SIGKILL)
                waitpid(child, &status, 0)
                result = -1
            } else {
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        await ended(child)
        return result ?? -2
    }
}
