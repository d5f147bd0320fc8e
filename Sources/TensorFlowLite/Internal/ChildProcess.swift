// Spawning a child process, capturing its output, and waiting for it with a time limit.
//
// Invariants: every descriptor opened here is closed before `run` returns; a child that
// outlives the time limit is killed and reaped, so no zombie is left behind.

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

    /// Runs `arguments[0]` with `arguments`, stdout captured, stderr discarded.
    static func run(_ arguments: [String], timeout: Double) throws -> Result {
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
        var variables: [UnsafeMutablePointer<CChar>?] = [strdup("SWIFT_BACKTRACE=enable=no")]
        var index = 0
        while let entry = environ[index] {
            if strncmp(entry, "SWIFT_BACKTRACE=", 16) != 0 { variables.append(strdup(entry)) }
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

    private static func wait(for pid: pid_t, timeout: Double) -> Termination {
        let deadline = monotonicSeconds() + timeout
        var pause: UInt32 = 200  // microseconds, doubling up to 20 ms
        while true {
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid {
                let signal = status & 0x7f
                return signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
            }
            if reaped < 0 && errno != EINTR { return .exited(-1) }
            if monotonicSeconds() > deadline {
                kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                return .timedOut
            }
            usleep(pause)
            pause = min(pause * 2, 20_000)
        }
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
