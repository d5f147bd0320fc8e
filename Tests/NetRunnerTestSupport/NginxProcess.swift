import Foundation

/// Debian's nginx on loopback, in front of `netrunner serve` processes, configured by the
/// repository's own `deploy/nginx/netrunner-serve.conf` with the ports substituted.
public final class NginxProcess: @unchecked Sendable {
    private let process = Process()
    private let folder: String
    /// The port nginx listens on.
    public let port: Int

    /// Starts nginx with `upstreams` (loopback ports) as the workers.
    ///
    /// - Parameters:
    ///   - upstreams: The workers' ports.
    ///   - folder: A scratch folder for its configuration, logs and temporary files.
    public convenience init(upstreams: [Int], folder: String) throws {
        let servers = upstreams.map { "    server 127.0.0.1:\($0) max_fails=1 fail_timeout=2s;" }
        try self.init(
            site: "deploy/nginx/netrunner-serve.conf", folder: folder, listen: "listen 127.0.0.1:8080;",
            replacing: [
                "    server 127.0.0.1:8081 max_fails=1 fail_timeout=2s;\n    server 127.0.0.1:8082 max_fails=1 fail_timeout=2s;":
                    servers.joined(separator: "\n")
            ])
    }

    /// Starts nginx with a site file of the repository, its text replaced as given and its
    /// `listen` line moved to a free port; requests are logged to `access.log` as
    /// `STATUS RANGE UPSTREAM`.
    ///
    /// - Parameters:
    ///   - path: The site file, relative to the repository.
    ///   - folder: A scratch folder for its configuration, logs and temporary files.
    ///   - listen: The site's `listen` line.
    ///   - replacing: Text of the site and what replaces it.
    public init(site path: String, folder: String, listen: String, replacing: [String: String]) throws {
        self.folder = folder
        port = LiveVideoServer.freePort()
        var site = try String(contentsOfFile: Fixtures.path(path), encoding: .utf8)
        for (old, new) in replacing { site = site.replacingOccurrences(of: old, with: new) }
        site = site.replacingOccurrences(
            of: listen, with: "listen 127.0.0.1:\(port);\n    access_log \(folder)/access.log tested;")
        site = "log_format tested '$status $http_range $upstream_addr';\n" + site
        try site.write(toFile: folder + "/site.conf", atomically: true, encoding: .utf8)
        let temporary = ["body", "proxy", "fastcgi", "uwsgi", "scgi"].map { name in
            "\(name == "body" ? "client_body" : name)_temp_path \(folder)/\(name);"
        }
        let main = """
            \(getuid() == 0 ? "user root;" : "")
            daemon off; worker_processes 1; pid \(folder)/nginx.pid; error_log \(folder)/error.log warn;
            events { worker_connections 512; }
            http { access_log off; \(temporary.joined(separator: " ")) include \(folder)/site.conf; }
            """
        try main.write(toFile: folder + "/nginx.conf", atomically: true, encoding: .utf8)
        let binary = ["/usr/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }
        process.executableURL = URL(fileURLWithPath: binary ?? "/usr/sbin/nginx")
        process.arguments = ["-p", folder, "-c", folder + "/nginx.conf"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        do {
            try Loopback.waitUntilListening(port)
        } catch {
            stop()
            throw error
        }
    }

    /// The URL of a path through nginx.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// nginx's access log: one `STATUS RANGE UPSTREAM` line per request.
    public var accessLog: String { (try? String(contentsOfFile: folder + "/access.log", encoding: .utf8)) ?? "" }

    /// nginx's error log (what it said about the workers).
    public var errorLog: String { (try? String(contentsOfFile: folder + "/error.log", encoding: .utf8)) ?? "" }

    /// Stops nginx.
    public func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}
