#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Starts a child process with `posix_spawn`, as the project's child processes start: default
/// signal handlers and no blocked signals (a crash ends it with its signal, whatever the parent
/// blocked or caught), its standard streams given, optionally in a process group of its own.
///
/// The decoder processes and the hub's gate evaluations start through it.
/// `TensorFlowLite`'s model check has a copy of its own: that module imports no other of the
/// project's, so that it stays the TensorFlow Lite Swift API and nothing more.
///
///     let pid = try ChildSpawn.spawn(
///         ["/usr/bin/netrunner", "evaluate", ...], stdin: .null, stdout: .file(log), stderr: .stdout,
///         processGroup: true
///     ).get()
package enum ChildSpawn {
    /// What one of the child's standard streams is.
    package enum Stream: Sendable, Equatable {
        /// `/dev/null`.
        case null
        /// A file, made or cut to nothing.
        case file(String)
        /// A descriptor of this process (duplicated for the child).
        case descriptor(Int32)
        /// The child's standard output (for its standard error).
        case stdout
    }

    /// An errno of a spawn that failed.
    package struct Failure: Error, Sendable, Equatable {
        /// The error number.
        package var code: Int32
    }

    /// How a child ended, from `waitpid`'s status.
    package enum Ending: Sendable, Equatable {
        /// It exited with this status.
        case exited(Int32)
        /// It was ended by this signal.
        case signaled(Int32)

        /// The ending of a `waitpid` status.
        ///
        /// - Parameter status: The status `waitpid` wrote.
        package init(status: Int32) {
            let signal = status & 0x7f
            self = signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
        }

        /// A shell's exit code for it: the status, or 128 plus the signal.
        package var shellCode: Int32 {
            switch self {
            case .exited(let status): status
            case .signaled(let signal): 128 + signal
            }
        }
    }

    /// Starts `arguments[0]` (a path) with `arguments`.
    ///
    /// - Parameters:
    ///   - arguments: The program's path, then its arguments.
    ///   - stdin: Its standard input.
    ///   - stdout: Its standard output.
    ///   - stderr: Its standard error.
    ///   - environment: Variables set beside this process's environment (none: this process's).
    ///   - processGroup: Whether it leads a process group of its own (so that `kill(-pid, ...)`
    ///     reaches whatever it starts).
    /// - Returns: Its process id, or the spawn's error.
    package static func spawn(
        _ arguments: [String], stdin: Stream, stdout: Stream, stderr: Stream, environment: [String: String] = [:],
        processGroup: Bool = false
    ) -> Result<Int32, Failure> {
        guard let path = arguments.first else { return .failure(Failure(code: EINVAL)) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (stream, target) in [(stdin, STDIN_FILENO), (stdout, STDOUT_FILENO), (stderr, STDERR_FILENO)] {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(
                    &actions, target, "/dev/null", target == STDIN_FILENO ? O_RDONLY : O_WRONLY, 0)
            case .file(let file):
                posix_spawn_file_actions_addopen(&actions, target, file, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            case .descriptor(let descriptor):
                posix_spawn_file_actions_adddup2(&actions, descriptor, target)
            case .stdout:
                posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, target)
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        if processGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.isEmpty ? [] : merged(environment).map { strdup($0) } + [nil]
        defer {
            for argument in argv { free(argument) }
            for variable in envp { free(variable) }
        }
        var pid: Int32 = 0
        let spawned = argv.withUnsafeBufferPointer { argumentPointers -> Int32 in
            envp.withUnsafeBufferPointer { variablePointers -> Int32 in
                guard let argumentBase = argumentPointers.baseAddress else { return EINVAL }
                // No variables of its own: this process's (an empty array's base is no list).
                let variables =
                    envp.isEmpty ? environ : variablePointers.baseAddress.map { UnsafeMutablePointer(mutating: $0) }
                let argumentList = UnsafeMutablePointer(mutating: argumentBase)
                return posix_spawn(&pid, path, &actions, &attributes, argumentList, variables)
            }
        }
        return spawned == 0 ? .success(pid) : .failure(Failure(code: spawned))
    }

    /// This process's environment with `extra` set over it, as `NAME=VALUE` entries.
    private static func merged(_ extra: [String: String]) -> [String] {
        var variables: [String: String] = [:]
        var index = 0
        while let entry = environ[index] {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                variables[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            index += 1
        }
        for (name, value) in extra { variables[name] = value }
        return variables.map { "\($0.key)=\($0.value)" }
    }
}
