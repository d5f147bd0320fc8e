// A decoder child's sandbox (issue 54): what the child does before it reads its first request,
// what it tells its parent about it, and the test-only probe that proves the sandbox holds.
//
// The child prepares libheif (heif_init loads its decoder plugins with dlopen), then installs
// the seccomp-BPF filter of decoder_sandbox.c: from then on it cannot open a file, create a
// socket, start a process or map new code. Its hello, the first message on its socket, says
// whether the filter is in place; the parent does not use a child without one unless the
// operator allowed it (``DecoderIsolation/Configuration/requiresSandbox``).

import CImageCodecs
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

enum DecoderSandbox {
    /// What a child says first: its sandbox's state.
    struct Hello: Codable, Equatable {
        enum State: String, Codable {
            /// The seccomp filter is installed.
            case installed
            /// This platform has no seccomp.
            case unavailable
            /// The kernel refused the filter.
            case failed
        }

        var state: State
        /// The one-line outcome (the filter's length, or why there is none).
        var detail: String
    }

    /// The fault (``DecoderWire/faultEnvironmentVariable``) that makes a child try, once its
    /// first request is read, to create the file after the colon, open /etc/hostname read-only
    /// and create a TCP socket, and answer with what each gave (as the decoder's error).
    static let probeFault = "probe-sandbox:"
    /// The fault that makes a child try to run /bin/true, which the sandbox answers with SIGSYS.
    static let probeExecFault = "probe-exec"
    /// The fault that makes a child skip its sandbox and say so (as a kernel without seccomp
    /// would): the benchmark's baseline, used only by a pool that does not require one.
    static let skipFault = "skip-sandbox"

    /// Prepares the decoders, then installs the sandbox (unless `fault` skips it): the child's
    /// last step before its loop.
    static func enter(fault: String?) -> Hello {
        nr_decoder_prepare()
        if fault == skipFault {
            return Hello(state: .failed, detail: "skipped (\(DecoderWire.faultEnvironmentVariable)=\(skipFault))")
        }
        var message = [CChar](repeating: 0, count: 256)
        let status = message.withUnsafeMutableBufferPointer { nr_sandbox_install($0.baseAddress, $0.count) }
        let detail = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        switch Int(status) {
        case Int(NR_SANDBOX_INSTALLED): return Hello(state: .installed, detail: detail)
        case Int(NR_SANDBOX_UNAVAILABLE): return Hello(state: .unavailable, detail: detail)
        default: return Hello(state: .failed, detail: detail)
        }
    }

    /// Runs the probe `fault` asks for; `nil` when `fault` is not a probe.
    static func probe(_ fault: String?) -> ImageError? {
        guard let fault else { return nil }
        if fault == probeExecFault {
            let path = strdup("/bin/true")
            let argv: [UnsafeMutablePointer<CChar>?] = [path, nil]
            let status = execv("/bin/true", argv)
            let code = errno
            free(path)
            return .decoderFailed(source: "probe", format: .heif, reason: "execve returned \(status), \(name(code))")
        }
        guard fault.hasPrefix(probeFault) else { return nil }
        let path = String(fault.dropFirst(probeFault.count))
        var results: [String] = []
        let created = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        results.append("create: " + (created >= 0 ? "opened" : name(errno)))
        if created >= 0 { close(created) }
        let read = open("/etc/hostname", O_RDONLY)
        results.append("read: " + (read >= 0 ? "opened" : name(errno)))
        if read >= 0 { close(read) }
        #if canImport(Glibc)
            let tcp = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let tcp = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        results.append("socket: " + (tcp >= 0 ? "created" : name(errno)))
        if tcp >= 0 { close(tcp) }
        return .decoderFailed(source: "probe", format: .heif, reason: results.joined(separator: ", "))
    }

    private static func name(_ code: Int32) -> String {
        switch code {
        case EPERM: "EPERM"
        case EACCES: "EACCES"
        case ENOENT: "ENOENT"
        case ENOSYS: "ENOSYS"
        default: "errno \(code)"
        }
    }
}
