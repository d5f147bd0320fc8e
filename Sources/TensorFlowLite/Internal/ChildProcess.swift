// Spawning a child process, capturing its output, and waiting for it with a time limit.
//
// Invariants: every descriptor opened here is closed before `run` returns; a child that
// outlives the time limit is killed and reaped, so no zombie is left behind. On Linux the limit
// counts the child's processor time (a niced child on a busy machine is not killed for waiting),
// with a limit on the clock behind it for a child that sleeps.

internal import CLiteRT

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

enum ChildProcess {
    enum Termination: Equatable, CustomStringConvertible {
        case exited(Int32)
        case signaled(Int32)
        case timedOut

        var description: String {
            switch self {
            case .exited(let code): "exit \(code)"
            case .signaled(let signal): "signal \(signal)"
            case .timedOut: "timed out"
            }
        }
    }

    struct Result {
        var termination: Termination
        /// What the child wrote to stdout (at most 1 MiB).
        var output: String
    }

    /// Runs `arguments[0]` with `arguments`, stdout captured, stderr discarded, this process's
    /// environment with `environment`'s `NAME=VALUE` entries in place of any of those names.
    ///
    /// The child is killed past `timeout` seconds of processor time (on Linux; elsewhere of
    /// time on the clock), or past ``wallLimit(_:)`` on the clock.
    static func run(_ arguments: [String], timeout: Double, environment: [String] = []) throws -> Result {
        let outputFile = nr_anonymous_file("netrunner-child-output")
        guard outputFile >= 0 else {
            throw InterpreterError.tensorFlowLiteError(
                "cannot capture the checker's output: \(ModelFile.errorText(errno)).")
        }
        defer { close(outputFile) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, outputFile, STDOUT_FILENO)
        posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0)

        // The child starts with no blocked signals and default handlers, whatever this
        // process (a test runner, a server) has set: a crash must end it with its signal.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = arguments.map { strdup($0) } + [nil]
        // This process's environment, but Swift's crash backtracer off: a crash here is the
        // verdict, and the backtracer would keep a process of its own alive for minutes.
        var variables: [UnsafeMutablePointer<CChar>?] =
            [strdup("SWIFT_BACKTRACE=enable=no")] + environment.map { strdup($0) }
        let replaced = ["SWIFT_BACKTRACE="] + environment.map { String($0.prefix { $0 != "=" }) + "=" }
        var index = 0
        while let entry = environ[index] {
            if !replaced.contains(where: { strncmp(entry, $0, strlen($0)) == 0 }) { variables.append(strdup(entry)) }
            index += 1
        }
        variables.append(nil)
        defer {
            for argument in argv { free(argument) }
            for variable in variables { free(variable) }
        }
        var pid: pid_t = 0
        let spawned = argv.withUnsafeBufferPointer { pointer -> Int32 in
            variables.withUnsafeBufferPointer { environment -> Int32 in
                guard let base = pointer.baseAddress, let variableBase = environment.baseAddress else { return EINVAL }
                return posix_spawn(
                    &pid, arguments[0], &actions, &attributes, UnsafeMutablePointer(mutating: base),
                    UnsafeMutablePointer(mutating: variableBase))
            }
        }
        guard spawned == 0 else {
            throw InterpreterError.tensorFlowLiteError("cannot start \(arguments[0]): \(ModelFile.errorText(spawned)).")
        }

        let termination = wait(for: pid, timeout: timeout)
        var output = ""
        var info = stat()
        if fstat(outputFile, &info) == 0, info.st_size > 0 {
            let size = min(Int(info.st_size), 1 << 20)
            var bytes = [UInt8](repeating: 0, count: size)
            let got = bytes.withUnsafeMutableBytes { pread(outputFile, $0.baseAddress, size, 0) }
            output = String(decoding: bytes.prefix(max(got, 0)), as: UTF8.self)
        }
        return Result(termination: termination, output: output)
    }

    /// The time on the clock a child may take with a processor-time limit of `timeout`:
    /// three times as long, plus 10 s.
    static func wallLimit(_ timeout: Double) -> Double {
        #if os(Linux)
            timeout * 3 + 10
        #else
            timeout
        #endif
    }

    private static func wait(for pid: pid_t, timeout: Double) -> Termination {
        let deadline = monotonicSeconds() + wallLimit(timeout)
        var pause: UInt32 = 200  // microseconds, doubling up to 20 ms
        while true {
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid {
                let signal = status & 0x7f
                return signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
            }
            if reaped < 0 && errno != EINTR { return .exited(-1) }
            if monotonicSeconds() > deadline || processorSeconds(pid) > timeout {
                kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                return .timedOut
            }
            usleep(pause)
            pause = min(pause * 2, 20_000)
        }
    }

    /// The processor time `pid` has used, user and system, all its threads (`/proc/PID/stat`,
    /// in clock ticks); 0 where that cannot be read (the limit on the clock still holds).
    static func processorSeconds(_ pid: pid_t) -> Double {
        #if os(Linux)
            let file = open("/proc/\(pid)/stat", O_RDONLY)
            guard file >= 0 else { return 0 }
            defer { close(file) }
            var buffer = [UInt8](repeating: 0, count: 1024)
            let count = buffer.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
            // The command name, in parentheses, may hold spaces: fields are counted after it.
            guard count > 0, let name = buffer[0..<count].lastIndex(of: UInt8(ascii: ")")) else { return 0 }
            let fields = buffer[(name + 1)..<count].split(separator: UInt8(ascii: " "))
            // fields[0] is the state (field 3 of proc(5)); utime and stime are fields 14 and 15.
            guard fields.count > 12, let user = Int(String(decoding: fields[11], as: UTF8.self)),
                let system = Int(String(decoding: fields[12], as: UTF8.self))
            else { return 0 }
            let ticks = max(Int(sysconf(Int32(_SC_CLK_TCK))), 1)
            return Double(user + system) / Double(ticks)
        #else
            return 0
        #endif
    }

    private static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    static func signalName(_ signal: Int32) -> String {
        switch signal {
        case SIGSEGV: "SIGSEGV"
        case SIGBUS: "SIGBUS"
        case SIGABRT: "SIGABRT"
        case SIGILL: "SIGILL"
        case SIGFPE: "SIGFPE"
        case SIGKILL: "SIGKILL"
        default: "signal \(signal)"
        }
    }

    static func isExecutable(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && access(path, X_OK) == 0
    }

    static func executableFolder() -> String? {
        guard let path = executablePath(), let slash = path.lastIndex(of: "/") else { return nil }
        return String(path[..<slash])
    }

    /// The running executable's path.
    static func executablePath() -> String? {
        #if os(Linux)
            var buffer = [CChar](repeating: 0, count: 4096)
            let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
            guard count > 0 else { return nil }
            return Runtime.cString(Array(buffer[0..<count]))
        #else
            return nil
        #endif
    }
}
