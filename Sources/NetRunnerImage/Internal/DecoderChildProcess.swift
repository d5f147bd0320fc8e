// One decoder child process and its socket: spawning it, bounded reads and writes, ending it.
//
// Invariants: the parent's end of the socket is close-on-exec, so no other child inherits it;
// writes use MSG_NOSIGNAL, so a child that died never raises SIGPIPE in the server; every
// read and write has a deadline (poll); a child is reaped on every path that ends it (no
// zombie is left); the child starts with default signal handlers and no blocked signals, so a
// crash in a decoder ends it with its signal.

import NetRunnerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A running decoder child: its process id and the parent's end of its socket.
///
/// The socket is one end of a stream socket pair whose other end is the child's stdin and
/// stdout. Used by one thread at a time (the pool hands it out).
struct DecoderChildProcess: Sendable {
    let pid: pid_t
    let socket: Int32

    /// How a child ended.
    enum Ending: Equatable {
        case exited(Int32)
        case signaled(Int32)

        var description: String {
            switch self {
            case .exited(let status): "exit status \(status)"
            case .signaled(let signal): "signal \(signal), \(DecoderChildProcess.signalName(signal))"
            }
        }
    }

    /// Why a read or a write stopped short.
    enum Failure: Error, Equatable {
        /// The child closed its end (it exited or crashed).
        case closed
        /// The deadline passed.
        case timedOut
        /// Another error of the socket (errno).
        case failed(Int32)
    }

    /// Starts `arguments[0]` with `arguments`, the socket as its stdin and stdout, stderr to
    /// /dev/null, the environment of this process plus `environment`.
    static func spawn(_ arguments: [String], environment: [String: String]) -> Result<Self, Failure> {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            return .failure(.failed(errno))
        }
        defer { close(pair[1]) }
        let spawned = ChildSpawn.spawn(
            arguments, stdin: .descriptor(pair[1]), stdout: .descriptor(pair[1]), stderr: .null,
            environment: environment)
        switch spawned {
        case .success(let pid):
            return .success(DecoderChildProcess(pid: pid, socket: pair[0]))
        case .failure(let failure):
            close(pair[0])
            return .failure(.failed(failure.code))
        }
    }

    /// Writes all of `bytes` before `deadline` (a monotonic time in seconds).
    func write(_ bytes: UnsafeRawBufferPointer, deadline: Double) -> Failure? {
        guard var next = bytes.baseAddress else { return nil }
        var left = bytes.count
        while left > 0 {
            if let failure = wait(for: Int16(POLLOUT), deadline: deadline) { return failure }
            let sent = send(socket, next, left, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
            if sent < 0 {
                if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
                return errno == EPIPE || errno == ECONNRESET ? .closed : .failed(errno)
            }
            next += sent
            left -= sent
        }
        return nil
    }

    /// Fills all of `buffer` before `deadline`.
    func read(into buffer: UnsafeMutableRawBufferPointer, deadline: Double) -> Failure? {
        guard var next = buffer.baseAddress else { return nil }
        var left = buffer.count
        while left > 0 {
            if let failure = wait(for: Int16(POLLIN), deadline: deadline) { return failure }
            let got = recv(socket, next, left, Int32(MSG_DONTWAIT))
            if got < 0 {
                if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
                return errno == ECONNRESET ? .closed : .failed(errno)
            }
            if got == 0 { return .closed }
            next += got
            left -= got
        }
        return nil
    }

    private func wait(for events: Int16, deadline: Double) -> Failure? {
        while true {
            let left = deadline - Self.now()
            if left <= 0 { return .timedOut }
            var entry = pollfd(fd: socket, events: events, revents: 0)
            let ready = poll(&entry, 1, Int32(min(left * 1000, 60_000).rounded(.up)))
            if ready < 0 {
                if errno == EINTR { continue }
                return .failed(errno)
            }
            if ready == 0 { continue }
            if entry.revents & Int16(POLLNVAL) != 0 { return .failed(EBADF) }
            // POLLHUP with data still to read: recv returns it, then 0.
            return nil
        }
    }

    /// Ends the child: closes the socket, gives it `grace` seconds to exit (a child that
    /// crashed already has), then kills it; reaps it either way.
    @discardableResult
    func end(grace: Double = 0.5) -> Ending {
        close(socket)
        let deadline = Self.now() + grace
        var pause: UInt32 = 200
        var status: Int32 = 0
        while true {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { return Self.ending(status) }
            if reaped < 0 && errno != EINTR { return .exited(-1) }
            if Self.now() > deadline { break }
            usleep(pause)
            pause = min(pause * 2, 20_000)
        }
        kill(pid, SIGKILL)
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return .signaled(SIGKILL) }
        }
        return Self.ending(status)
    }

    private static func ending(_ status: Int32) -> Ending {
        switch ChildSpawn.Ending(status: status) {
        case .exited(let code): .exited(code)
        case .signaled(let signal): .signaled(signal)
        }
    }

    /// Monotonic seconds.
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    static func signalName(_ signal: Int32) -> String {
        switch signal {
        case SIGSEGV: "SIGSEGV"
        case SIGBUS: "SIGBUS"
        case SIGABRT: "SIGABRT"
        case SIGILL: "SIGILL"
        case SIGFPE: "SIGFPE"
        case SIGKILL: "SIGKILL"
        case SIGSYS: "SIGSYS"
        default: "signal \(signal)"
        }
    }

    /// The running executable's path (`/proc/self/exe`).
    static func executablePath() -> String? {
        #if os(Linux)
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBufferPointer { pointer in
                pointer.baseAddress.map { base in
                    base.withMemoryRebound(to: CChar.self, capacity: 4095) { readlink("/proc/self/exe", $0, 4095) }
                } ?? -1
            }
            guard count > 0 else { return nil }
            return String(decoding: buffer[0..<count], as: UTF8.self)
        #else
            return nil
        #endif
    }

    static func isExecutable(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && access(path, X_OK) == 0
    }
}
