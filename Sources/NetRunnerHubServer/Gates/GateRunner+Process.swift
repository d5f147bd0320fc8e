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
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setpgroup(&attributes, 0)
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let spawned = argv.withUnsafeBufferPointer { pointers -> Int32 in
            guard let base = pointers.baseAddress else { return EINVAL }
            return posix_spawn(&pid, arguments[0], &actions, &attributes, UnsafeMutablePointer(mutating: base), environ)
        }
        guard spawned == 0 else { return -2 }
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
                result = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
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
