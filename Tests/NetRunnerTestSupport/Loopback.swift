import Foundation

/// The machine's TCP sockets as the kernel lists them (`/proc/net/tcp` and `tcp6`), read
/// without connecting: a server that serves one client only (ffmpeg's `-listen 1`) is not used
/// up by the look, and a server's progress on a connection (the bytes it has not read yet) can
/// be seen from outside.
public enum Loopback {
    /// One socket of the table.
    public struct Socket: Sendable {
        /// The local port.
        public var port: Int
        /// The remote port (0 for a listening socket).
        public var remotePort: Int
        /// Whether it listens (state `0A`).
        public var isListening: Bool
        /// Bytes received and not yet read by the socket's owner.
        public var unread: Int
        /// The socket's inode (as in `/proc/PID/fd`'s `socket:[INODE]`).
        public var inode: Int
    }

    /// Every TCP socket of the machine, IPv4 and IPv6.
    public static func sockets() -> [Socket] {
        ["/proc/net/tcp", "/proc/net/tcp6"].flatMap { path -> [Socket] in
            // Read to the end: the kernel hands the table out a page per read, and a file of
            // size 0 (as /proc's are) is read once by String(contentsOfFile:).
            let table = String(
                decoding: FileHandle(forReadingAtPath: path)?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
            return table.split(separator: "\n").dropFirst().compactMap { line in
                // sl local_address rem_address st tx_queue:rx_queue tr:when retrnsmt uid timeout inode
                let fields = line.split(separator: " ")
                guard fields.count > 9,
                    let local = fields[1].split(separator: ":").last.flatMap({ Int($0, radix: 16) }),
                    let remote = fields[2].split(separator: ":").last.flatMap({ Int($0, radix: 16) }),
                    let unread = fields[4].split(separator: ":").last.flatMap({ Int($0, radix: 16) }),
                    let inode = Int(fields[9])
                else { return nil }
                return Socket(
                    port: local, remotePort: remote, isListening: fields[3] == "0A", unread: unread, inode: inode)
            }
        }
    }

    /// Whether a socket listens on `port`.
    public static func isListening(_ port: Int) -> Bool {
        sockets().contains { $0.port == port && $0.isListening }
    }

    /// Waits until a socket listens on `port`.
    ///
    /// - Throws: ``Eventually/Timeout`` after `limit`.
    public static func waitUntilListening(_ port: Int, upTo limit: Duration = .seconds(30)) throws {
        try Eventually.waitBlocking(for: "a server listening on port \(port)", upTo: limit) { isListening(port) }
    }

    /// The inodes of the sockets process `pid` holds open.
    public static func socketInodes(of pid: Int32) -> Set<Int> {
        let folder = "/proc/\(pid)/fd"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return Set(
            entries.compactMap { entry in
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + entry),
                    target.hasPrefix("socket:[")
                else { return nil }
                return Int(target.dropFirst("socket:[".count).dropLast())
            })
    }

    /// Whether process `pid`, serving on `port`, has accepted the connection from `clientPort`
    /// and read every byte sent on it so far.
    public static func hasRead(_ pid: Int32, port: Int, from clientPort: Int) -> Bool {
        let held = socketInodes(of: pid)
        return sockets().contains {
            $0.port == port && $0.remotePort == clientPort && $0.unread == 0 && held.contains($0.inode)
        }
    }
}
