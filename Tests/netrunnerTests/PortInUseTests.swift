import Foundation
import NetRunnerTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `serve` and `hub serve` on a port another program holds: one line naming the address and
/// port, and the flags that fix it, instead of NIO's `bind(descriptor:ptr:bytes:)` error.
@Suite("A port in use")
struct PortInUseTests {
    /// A TCP socket listening on a free loopback port, as another server would.
    final class Occupied {
        let descriptor: Int32
        let port: Int

        init() throws {
            let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(socketDescriptor, $0, length) == 0 && listen(socketDescriptor, 1) == 0
                        && getsockname(socketDescriptor, $0, &length) == 0
                }
            }
            descriptor = socketDescriptor
            port = Int(UInt16(bigEndian: address.sin_port))
            try #require(socketDescriptor >= 0 && bound && port > 0, "a listening socket: errno \(errno)")
        }

        deinit { close(descriptor) }
    }

    @Test(
        "serve and hub serve name the address and port, and suggest --port and --port 0",
        arguments: ["serve", "hub serve"])
    func portInUse(command: String) throws {
        let occupied = try Occupied()
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let arguments =
            command == "serve"
            ? ["serve", "--models", Fixtures.path("Models/bundles"), "--no-import"]
            : ["hub", "serve", "--data", folder.path("data"), "--admin-key", "k"]
        let result = try ProcessResult.run(Fixtures.netrunner, arguments + ["--port", "\(occupied.port)"])
        #expect(result.status == 1, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n").filter { $0.hasPrefix("Error: ") }
        #expect(
            lines == [
                """
                Error: netrunner \(command) cannot listen on 127.0.0.1:\(occupied.port): the port is already in use \
                (another server, or an earlier netrunner \(command) still running); stop that one, or choose another \
                with --port (--port \(occupied.port + 1)), or --port 0 for any free port (printed at start).
                """
            ], "\(result.stderr)")
        #expect(!result.stderr.contains("errno") && !result.stderr.contains("descriptor"), "\(result.stderr)")
    }
}
